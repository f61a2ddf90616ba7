/* sw_cmd_read.c: the read side of `splatsweep` straight from a database (sw_cmd.h): `pareto`
 * (sw_pareto.h) and `audit` (sw_audit.h). The options become the libraries' option structs;
 * the database is opened read-only. */
#include "sw_cmd.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "sw_audit.h"
#include "sw_fs.h"
#include "sw_pareto.h"
#include "sw_store.h"

/* ---- pareto -------------------------------------------------------------------------------- */

static void pareto_usage(FILE *f) {
  fprintf(f, "usage: splatsweep pareto [SWEEP] [--db PATH] [--format text|md|json|csv|html] "
             "[-o FILE]\n"
             "                         [--compare CONFIG --against CONFIG]\n");
}

int sw_cmd_pareto(int argc, char **argv) {
  enum { OPT_DB = 256, OPT_FORMAT, OPT_COMPARE, OPT_AGAINST };
  static const struct option LONG[] = {{"db", required_argument, 0, OPT_DB},
                                       {"format", required_argument, 0, OPT_FORMAT},
                                       {"compare", required_argument, 0, OPT_COMPARE},
                                       {"against", required_argument, 0, OPT_AGAINST},
                                       {"output", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *db = SW_STORE_DEFAULT_PATH, *output = NULL;
  enum sw_pareto_format format = SW_PARETO_TEXT;
  struct sw_pareto_opts o = {0};
  struct sw_err err = {0};
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "o:h", LONG, NULL)) != -1) {
    switch (c) {
    case OPT_DB: db = optarg; break;
    case OPT_FORMAT:
      if (sw_pareto_format_parse(optarg, &format, &err)) {
        fprintf(stderr, "splatsweep pareto: %s\n", err.msg);
        return 2;
      }
      break;
    case OPT_COMPARE: o.compare_a = optarg; break;
    case OPT_AGAINST: o.compare_b = optarg; break;
    case 'o': output = optarg; break;
    case 'h': pareto_usage(stdout); return 0;
    default: pareto_usage(stderr); return 2;
    }
  }
  if (argc - optind > 1) {
    pareto_usage(stderr);
    return 2;
  }
  if (!sw_fs_exists(db)) {
    fprintf(stderr, "splatsweep pareto: no database at %s (use --db PATH)\n", db);
    return 2;
  }
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.read_only = 1;
  sw_store_t *store = NULL;
  char *text = NULL;
  int rc = sw_store_open(db, &so, &store, &err);
  if (!rc && optind < argc) rc = sw_pareto_resolve_sweep(store, argv[optind], &o.sweep_id, &err);
  if (!rc) rc = sw_pareto_render_string(store, &o, format, &text, &err);
  sw_store_close(&store);
  if (!rc) {
    if (output)
      rc = sw_fs_write_atomic(output, text, strlen(text), &err);
    else if (fputs(text, stdout) == EOF || fflush(stdout))
      rc = sw_err_set(&err, SW_EIO, "writing to stdout failed");
  }
  free(text);
  if (rc) {
    fprintf(stderr, "splatsweep pareto: %s\n", err.msg);
    return rc == SW_EINVAL || rc == SW_ENOTFOUND ? 2 : 1;
  }
  return 0;
}

/* ---- audit --------------------------------------------------------------------------------- */

static void audit_usage(FILE *f) {
  fprintf(f, "usage: splatsweep audit [SWEEP] [--db PATH] [--format text|json]\n"
             "                        [--reference SWEEP [--gate NAME] [--tolerance 0.005]]\n"
             "exit 0: the audit passes; 1: problems found (listed with their runs); 2: bad "
             "input\n");
}

int sw_cmd_audit(int argc, char **argv) {
  enum { OPT_DB = 256, OPT_FORMAT, OPT_REFERENCE, OPT_GATE, OPT_TOLERANCE };
  static const struct option LONG[] = {{"db", required_argument, 0, OPT_DB},
                                       {"format", required_argument, 0, OPT_FORMAT},
                                       {"reference", required_argument, 0, OPT_REFERENCE},
                                       {"gate", required_argument, 0, OPT_GATE},
                                       {"tolerance", required_argument, 0, OPT_TOLERANCE},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *db = SW_STORE_DEFAULT_PATH, *reference = NULL;
  int json = 0;
  struct sw_audit_opts o = {0};
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
    switch (c) {
    case OPT_DB: db = optarg; break;
    case OPT_FORMAT:
      if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
        fprintf(stderr, "splatsweep audit: unknown format '%s' (text or json)\n", optarg);
        return 2;
      }
      json = strcmp(optarg, "json") == 0;
      break;
    case OPT_REFERENCE: reference = optarg; break;
    case OPT_GATE: o.reference_gate = optarg; break;
    case OPT_TOLERANCE: {
      char *end;
      o.tolerance = strtod(optarg, &end);
      if (end == optarg || *end || !(o.tolerance > 0 && o.tolerance < 1)) {
        fprintf(stderr,
                "splatsweep audit: --tolerance %s: expected a fraction in (0, 1), "
                "e.g. 0.005\n",
                optarg);
        return 2;
      }
      break;
    }
    case 'h': audit_usage(stdout); return 0;
    default: audit_usage(stderr); return 2;
    }
  }
  if (argc - optind > 1 || (reference && argc - optind != 1)) {
    audit_usage(stderr);
    return 2;
  }
  if (!sw_fs_exists(db)) {
    fprintf(stderr, "splatsweep audit: no database at %s (use --db PATH)\n", db);
    return 2;
  }
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.read_only = 1;
  sw_store_t *store = NULL;
  struct sw_err err = {0};
  char *text = NULL;
  size_t len = 0;
  int problems = 0;
  int rc = sw_store_open(db, &so, &store, &err);
  if (!rc && optind < argc) rc = sw_pareto_resolve_sweep(store, argv[optind], &o.sweep_id, &err);
  if (!rc && reference) rc = sw_pareto_resolve_sweep(store, reference, &o.reference_id, &err);
  if (!rc) {
    FILE *m = open_memstream(&text, &len);
    if (!m) {
      rc = sw_err_set(&err, SW_ENOMEM, "audit: open_memstream failed");
    } else {
      rc = sw_audit_render(store, &o, json, m, &problems, &err);
      fclose(m);
    }
  }
  sw_store_close(&store);
  if (!rc && (fputs(text ? text : "", stdout) == EOF || fflush(stdout)))
    rc = sw_err_set(&err, SW_EIO, "writing to stdout failed");
  free(text);
  if (rc) {
    fprintf(stderr, "splatsweep audit: %s\n", err.msg);
    return rc == SW_EINVAL || rc == SW_ENOTFOUND ? 2 : 1;
  }
  return problems ? 1 : 0;
}

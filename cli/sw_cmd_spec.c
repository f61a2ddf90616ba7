/* sw_cmd_spec.c: the offline tools of `splatsweep` (sw_cmd.h): check, check-result, gate eval,
 * keygen, and the spec check that submit and local run before anything leaves this process. */
#include "sw_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "sw_fs.h"
#include "sw_gate.h"
#include "sw_noise.h"
#include "sw_result.h"
#include "sw_spec.h"
#include "sw_store.h"
#ifdef SW_HAVE_TRAINER_KEYS
#include "gs_config.h"
#endif

static int check_trainer_keys(const char *path, const struct sw_spec *s);

/* check-result FILE...: each file against docs/result.schema.json, as the coordinator checks
 * every result it is sent. Exit 0 when all match, 1 when one does not, 2 when one is unreadable. */
int sw_cmd_check_result(int n, char **files) {
  if (n < 1) {
    fprintf(stderr, "usage: splatsweep check-result RESULT.json...\n");
    return SW_CMD_EXIT_USAGE;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char *text = NULL;
    struct sw_err err = {0};
    if (sw_fs_read_all(files[i], &text, NULL, &err)) {
      fprintf(stderr, "%s: %s\n", files[i], err.msg);
      rc = SW_CMD_EXIT_USAGE;
      continue;
    }
    if (sw_result_check_text(text, &err)) {
      printf("%s: %s\n", files[i], err.msg);
      if (!rc) rc = 1;
    } else {
      printf("%s: ok\n", files[i]);
    }
    free(text);
  }
  return rc;
}

/* What a gate spec will cost, before it starts (docs/gate-rules.md section 5): the gate
 * engine's forecast for the spec's design at three assumed machine CVs, 10% of runs flagged, the
 * pairs on one machine. `check` has no store; the machines' recorded noise (sw_gate_noise_assess)
 * is the coordinator's to supply at submit. The design is the spec's: k, floor, alpha,
 * direction, pairs.n / max / sequential; everything else the engine's defaults. */
static void print_forecast(const struct sw_spec *s, double recorded_cv, int machines) {
  struct sw_gate_config cfg;
  sw_gate_config_default(&cfg);
  cfg.direction = s->gate.direction == SW_DIR_HIGHER ? SW_GATE_HIGHER : SW_GATE_LOWER;
  cfg.k = s->gate.k;
  cfg.floor = s->gate.floor;
  cfg.alpha = s->gate.alpha;
  cfg.sequential = s->pairs.sequential;
  cfg.min_pairs = (int)s->pairs.n;
  cfg.max_pairs = (int)s->pairs.max;
  /* The machines' recorded noise first, when there is a store to read it from. */
  double cvs[4] = {recorded_cv, 0.005, 0.01, 0.015};
  int first = isfinite(recorded_cv) && recorded_cv > 0 ? 0 : 1;
  if (cfg.sequential)
    printf("forecast (gate engine, 400 simulated gates per figure, looks from %d to %d pairs, "
           "10%% of runs flagged, machine CV assumed):\n",
           cfg.min_pairs, cfg.max_pairs);
  else
    printf("forecast (gate engine, 400 simulated gates per figure, %d pairs, 10%% of runs "
           "flagged, machine CV assumed):\n",
           cfg.min_pairs);
  for (int i = first; i < 4; i++) {
    if (i == 0) printf("  recorded noise of %d machine(s):", machines);
    struct sw_gate_forecast f;
    struct sw_err err = {0};
    if (sw_gate_forecast(&cfg, (int)s->pairs.n, cvs[i], 0.10, 1, 400, 1, &f, &err)) {
      printf("  CV %.1f%%: no forecast: %s\n", 100 * cvs[i], err.msg);
      continue;
    }
    printf("  CV %.1f%% (threshold %.2f%%): null change adopted %.1f%%, %.1f runs;", 100 * cvs[i],
           100 * f.threshold, 100 * f.row[0].p_adopt, f.row[0].runs_mean);
    for (int k = 1; k < SW_GATE_FORECAST_ROWS; k++)
      printf(" %.2f%% better: adopted %.0f%%, %.1f runs%s", 100 * f.row[k].effect,
             100 * f.row[k].p_adopt, f.row[k].runs_mean, k + 1 < SW_GATE_FORECAST_ROWS ? ";" : "");
    printf(" (at most %d runs)\n", f.row[1].runs_max);
  }
}

/* The machines' noise on the gate's metric from the store at db (sw_noise.h): prints each
 * machine whose noise jumped, and gives the fleet's planning CV (NAN when nothing is recorded). */
static void recorded_noise(const char *db, const struct sw_spec *spec, double *cv, int *machines) {
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.read_only = 1;
  sw_store_t *store = NULL;
  struct sw_err err = {0};
  if (sw_store_open(db, &so, &store, &err)) {
    printf("recorded noise: none (%s)\n", err.msg);
    return;
  }
  json_t *nz = sw_noise_json(store, spec->gate.metric, &err);
  sw_store_close(&store);
  if (!nz) {
    printf("recorded noise: none (%s)\n", err.msg);
    return;
  }
  size_t i;
  json_t *m;
  json_array_foreach(json_object_get(nz, "machines"), i, m) {
    if (!json_is_true(json_object_get(m, "jumped"))) continue;
    printf("noise jumped on machine %s: CV %.2f%% in its latest gate, %.2f%% before (F test p = "
           "%.2g); planning with the latest\n",
           json_string_value(json_object_get(m, "machine")),
           100 * json_number_value(json_object_get(m, "cv_recent")),
           100 * json_number_value(json_object_get(m, "cv_history")),
           json_number_value(json_object_get(m, "p")));
  }
  *machines = (int)json_array_size(json_object_get(nz, "machines"));
  if (json_is_number(json_object_get(nz, "cv_plan")))
    *cv = json_number_value(json_object_get(nz, "cv_plan"));
  else
    printf("recorded noise: no finished gate on %s in %s\n", spec->gate.metric, db);
  json_decref(nz);
}

int sw_cmd_check(struct sw_cmd_args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep check SPEC [--db PATH]\n");
    return SW_CMD_EXIT_USAGE;
  }
  /* The "ok" line is held back until the trainer keys have been checked too. */
  char *said = NULL;
  size_t said_len = 0;
  FILE *mem = open_memstream(&said, &said_len);
  if (!mem) {
    fprintf(stderr, "splatsweep check: out of memory\n");
    return 1;
  }
  int rc = sw_spec_check_file(a->pos[0], mem);
  fclose(mem);
  struct sw_spec *spec = NULL;
  struct sw_err err = {0};
  if (rc) {
    fputs(said ? said : "", stdout); /* the spec's own error, where it always went */
  } else if (sw_spec_load_file(a->pos[0], &spec, &err)) { /* a race with an edit */
    fprintf(stderr, "%s\n", err.msg);
    rc = -1;
  } else if (!(rc = check_trainer_keys(a->pos[0], spec))) {
    fputs(said ? said : "", stdout);
    if (spec->kind == SW_SPEC_GATE) {
      double cv = NAN;
      int machines = 0;
      if (a->db) /* --db: plan on the machines' recorded noise too, and name jumps */
        recorded_noise(a->db, spec, &cv, &machines);
      print_forecast(spec, cv, machines);
    }
  }
  sw_spec_destroy(&spec);
  free(said);
  return rc ? SW_CMD_EXIT_USAGE : 0;
}

int sw_cmd_gate(struct sw_cmd_args *a) {
  if (a->n_pos != 2 || strcmp(a->pos[0], "eval")) {
    fprintf(stderr, "usage: splatsweep gate eval FILE.json\n");
    return SW_CMD_EXIT_USAGE;
  }
  struct sw_err err = {0};
  if (sw_gate_eval_file(a->pos[1], stdout, &err)) {
    fprintf(stderr, "splatsweep gate eval: %s\n", err.msg);
    return err.code == SW_EINVAL || err.code == SW_ENOTFOUND ? SW_CMD_EXIT_USAGE : 1;
  }
  return 0;
}

int sw_cmd_keygen(struct sw_cmd_args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep keygen DIR\n");
    return SW_CMD_EXIT_USAGE;
  }
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) {
    fprintf(stderr, "splatsweep keygen: %s (libzmq built without CURVE?)\n", zmq_strerror(errno));
    return 1;
  }
  struct sw_err err = {0};
  char p[4200], line[64];
  if (sw_fs_mkdir_p(a->pos[0], &err)) {
    fprintf(stderr, "splatsweep keygen: %s\n", err.msg);
    return 1;
  }
  snprintf(p, sizeof p, "%s/secret.key", a->pos[0]);
  if (sw_fs_exists(p)) {
    fprintf(stderr, "splatsweep keygen: %s exists; refusing to overwrite a key\n", p);
    return 1;
  }
  snprintf(line, sizeof line, "%s\n", sec);
  mode_t old = umask(077); /* the secret key is readable by its owner only */
  int rc = sw_fs_write_atomic(p, line, strlen(line), &err);
  umask(old);
  if (!rc) chmod(p, 0600);
  snprintf(p, sizeof p, "%s/public.key", a->pos[0]);
  snprintf(line, sizeof line, "%s\n", pub);
  if (!rc) rc = sw_fs_write_atomic(p, line, strlen(line), &err);
  if (rc) {
    fprintf(stderr, "splatsweep keygen: %s\n", err.msg);
    return 1;
  }
  printf("%s\n", pub);
  return 0;
}

/* LAB-PRACTICE rule 7: configs are validated before the series starts. For the builtin trainer,
 * every run's resolved config (both arms of a gate, every grid point) goes through the
 * trainer's own key table (pipeline/gs_config.c, compiled in) the way the worker passes it,
 * `--set key=value` in order, then the trainer's cross-key validation. A typo in an arm is then
 * refused here rather than failing every run of the series. Returns 0, or -1 after printing.
 * Without the pipeline in the build (or for exec trainers) there is no table to check against. */
#ifdef SW_HAVE_TRAINER_KEYS
static int check_run_config(const char *path, const char *what, const struct sw_spec_config *c) {
  struct gs_config g;
  gs_config_defaults(&g);
  struct sw_err err = {0};
  for (size_t i = 0; i < c->n; i++) {
    if (gs_config_set(&g, c->items[i].key, c->items[i].text, &err)) {
      fprintf(stderr, "%s: %s: trainer key %s=%s: %s\n", path, what, c->items[i].key,
              c->items[i].text, err.msg);
      return -1;
    }
  }
  if (gs_config_validate(&g, &err)) {
    fprintf(stderr, "%s: %s: trainer config: %s\n", path, what, err.msg);
    return -1;
  }
  return 0;
}
#endif

static int check_trainer_keys(const char *path, const struct sw_spec *s) {
#ifdef SW_HAVE_TRAINER_KEYS
  if (s->trainer.kind != SW_TRAINER_BUILTIN) return 0;
  struct sw_err err = {0};
  struct sw_spec_config c;
  int bad = 0;
  if (s->kind == SW_SPEC_GATE) {
    const char *arms[] = {"off", "on"};
    for (int a = 0; a < 2 && !bad; a++) {
      char what[32];
      snprintf(what, sizeof what, "arm '%s'", arms[a]);
      if (sw_spec_resolve_arm(s, arms[a], &c, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return -1;
      }
      bad = check_run_config(path, what, &c);
      sw_spec_config_clear(&c);
    }
    return bad ? -1 : 0;
  }
  struct sw_spec_point *pts = NULL;
  size_t n = 0;
  if (sw_spec_grid_expand(s, &pts, &n, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    return -1;
  }
  for (size_t i = 0; i < n && !bad; i++) {
    char what[300];
    snprintf(what, sizeof what, "grid point '%s'", pts[i].label);
    if (sw_spec_resolve_point(s, &pts[i], &c, &err)) {
      fprintf(stderr, "%s: %s\n", path, err.msg);
      bad = 1;
      break;
    }
    bad = check_run_config(path, what, &c);
    sw_spec_config_clear(&c);
  }
  sw_spec_points_free(&pts, n);
  return bad ? -1 : 0;
#else
  (void)path;
  (void)s;
  return 0;
#endif
}

/* Validates the spec at path and reads its text into *yaml_out (caller frees). A bad spec is
 * checked here, before anything leaves this process or reaches a store, and reported with its
 * file:line:column. *builtin (may be NULL) is set to 1 when the spec runs the builtin trainer.
 * Returns 0, or -1 after printing the error. */
int sw_cmd_read_checked_spec(const char *cmd, const char *path, char **yaml_out, int *builtin) {
  struct sw_err err = {0};
  struct sw_spec *spec = NULL;
  *yaml_out = NULL;
  if (sw_spec_load_file(path, &spec, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  if (builtin) *builtin = spec->trainer.kind == SW_TRAINER_BUILTIN;
  int keys_bad = check_trainer_keys(path, spec);
  sw_spec_destroy(&spec);
  if (keys_bad) return -1;
  if (sw_fs_read_all(path, yaml_out, NULL, &err)) {
    fprintf(stderr, "splatsweep %s: %s\n", cmd, err.msg);
    return -1;
  }
  return 0;
}

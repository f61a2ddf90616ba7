/* sw_watch.c: `splatsweep watch`: the status JSON rendered as a live screen or as plain lines
 * (sw_watch.h). */
#include "sw_watch.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_json.h"

#define BAR_MIN 10
#define BAR_MAX 40

const json_t *sw_watch_pick(const json_t *status, int64_t sweep_id) {
  const json_t *best = NULL, *newest = NULL;
  size_t i;
  json_t *sw;
  json_array_foreach(json_object_get(status, "sweeps"), i, sw) {
    json_int_t id = sw_json_int(sw, "id");
    if (sweep_id) {
      if (id == sweep_id) return sw;
      continue;
    }
    if (!newest || id > sw_json_int(newest, "id")) newest = sw;
    if (!strcmp(sw_json_str(json_object_get(sw, "status"), ""), "running") &&
        (!best || id > sw_json_int(best, "id")))
      best = sw;
  }
  return sweep_id ? NULL : best ? best : newest;
}

int sw_watch_outcome(const json_t *sweep) {
  const char *st = sw_json_str(json_object_get(sweep, "status"), "running");
  if (!strcmp(st, "running")) return -1;
  if (strcmp(st, "done")) return SW_WATCH_EXIT_FAILED;
  int reject = 0, inconclusive = 0;
  size_t i;
  json_t *g;
  json_array_foreach(json_object_get(sweep, "gates"), i, g) {
    const char *v = sw_json_str(json_object_get(g, "verdict"), "");
    if (!strcmp(v, "reject"))
      reject = 1;
    else if (strcmp(v, "adopt"))
      inconclusive = 1; /* inconclusive, or a gate that failed without a verdict */
  }
  return reject         ? SW_WATCH_EXIT_REJECT
         : inconclusive ? SW_WATCH_EXIT_INCONCLUSIVE
                        : SW_WATCH_EXIT_ADOPT;
}

/* A gate's planned pairs: n, or more once a sequential gate extended or replacements came. */
static void gate_counts(const json_t *g, json_int_t *done, json_int_t *planned) {
  const json_t *p = json_object_get(g, "pairs");
  json_int_t total = sw_json_int(p, "total") - sw_json_int(p, "abandoned");
  *done = sw_json_int(p, "done");
  *planned = sw_json_int(g, "n") > total ? sw_json_int(g, "n") : total;
}

/* "forming adopt: effect -4.9% [-5.6, -4.2], delta -0.049 vs 0.012, guard pass" or "". */
static void forming_text(const json_t *g, char *buf, size_t cap) {
  const json_t *f = json_object_get(g, "forming");
  buf[0] = '\0';
  if (!json_is_object(f) || !json_is_string(json_object_get(f, "verdict"))) return;
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "%s %s",
                        json_is_string(json_object_get(g, "verdict")) ? "verdict" : "forming",
                        sw_json_str(json_object_get(f, "verdict"), "?"));
  const json_t *e = json_object_get(f, "effect_pct"), *iv = json_object_get(f, "interval_pct");
  if (n < cap && json_is_number(e))
    n += (size_t)snprintf(buf + n, cap - n, ": effect %+.2f%%", json_number_value(e));
  if (n < cap && json_array_size(iv) == 2 && json_is_number(json_array_get(iv, 0)) &&
      json_is_number(json_array_get(iv, 1)))
    n += (size_t)snprintf(buf + n, cap - n, " [%+.2f, %+.2f]",
                          json_number_value(json_array_get(iv, 0)),
                          json_number_value(json_array_get(iv, 1)));
  const json_t *d = json_object_get(f, "delta"), *th = json_object_get(f, "threshold");
  if (n < cap && json_is_number(d) && json_is_number(th))
    n += (size_t)snprintf(buf + n, cap - n, ", delta %+.4f vs threshold %.4f", json_number_value(d),
                          json_number_value(th));
  const json_t *gp = json_object_get(f, "guard_pass");
  if (n < cap && json_is_boolean(gp))
    n += (size_t)snprintf(buf + n, cap - n, ", guard %s", json_is_true(gp) ? "pass" : "fail");
  const char *dec = sw_json_str(json_object_get(f, "decision"), "none");
  if (n < cap && strcmp(dec, "none")) snprintf(buf + n, cap - n, ", look: %s", dec);
}

static void bar(FILE *f, double frac, int width) {
  if (!(frac >= 0)) frac = 0;
  if (frac > 1) frac = 1;
  int fill = (int)lround(frac * width);
  fputc('[', f);
  for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '-', f);
  fputc(']', f);
}

/* The sessions working on this sweep (the status's "coordinator"."sessions"). */
static int session_on(const json_t *ss, json_int_t sweep_id) {
  return sw_json_int(ss, "run") != 0 && sw_json_int(ss, "sweep") == sweep_id;
}

char *sw_watch_render(const json_t *status, const json_t *sweep, int width) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  int bw = (width > 0 ? width : 80) - 44;
  if (bw < BAR_MIN) bw = BAR_MIN;
  if (bw > BAR_MAX) bw = BAR_MAX;
  json_int_t id = sw_json_int(sweep, "id");
  const json_t *sp = json_object_get(sweep, "pairs");
  int grid = !strcmp(sw_json_str(json_object_get(sweep, "kind"), ""), "grid");
  fprintf(f,
          "sweep %" JSON_INTEGER_FORMAT " %s (%s): %s, %s %" JSON_INTEGER_FORMAT
          "/%" JSON_INTEGER_FORMAT " done\n",
          id, sw_json_str(json_object_get(sweep, "name"), "?"),
          sw_json_str(json_object_get(sweep, "kind"), "?"),
          sw_json_str(json_object_get(sweep, "status"), "?"), grid ? "runs" : "pairs",
          sw_json_int(sp, "done"), sw_json_int(sp, "total"));
  if (grid) {
    fprintf(f, "  %-20.20s ", "runs");
    bar(f,
        sw_json_int(sp, "total")
            ? (double)sw_json_int(sp, "done") / (double)sw_json_int(sp, "total")
            : 0,
        bw);
    fputc('\n', f);
  }
  size_t i;
  json_t *g;
  json_array_foreach(json_object_get(sweep, "gates"), i, g) {
    json_int_t done, planned;
    gate_counts(g, &done, &planned);
    fprintf(f, "  gate %-15.15s ", sw_json_str(json_object_get(g, "name"), "?"));
    bar(f, planned ? (double)done / (double)planned : 0, bw);
    fprintf(f,
            " %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT " pairs (max %" JSON_INTEGER_FORMAT
            "), looks %" JSON_INTEGER_FORMAT "\n",
            done, planned, sw_json_int(g, "max"), sw_json_int(g, "looks"));
    char ft[400];
    forming_text(g, ft, sizeof ft);
    fprintf(f, "       %s\n", ft[0] ? ft : "no verdict yet: waiting for the first pair");
  }
  int busy = 0, others = 0;
  json_t *ss;
  json_array_foreach(json_object_get(json_object_get(status, "coordinator"), "sessions"), i, ss) {
    if (!session_on(ss, id)) {
      others++;
      continue;
    }
    busy++;
    json_int_t it = sw_json_int(ss, "iter");
    const json_t *total = json_object_get(ss, "iterations");
    fprintf(f, "  worker %-13.13s ", sw_json_str(json_object_get(ss, "id"), "?"));
    if (json_is_integer(total) && json_integer_value(total) > 0) {
      bar(f, (double)it / (double)json_integer_value(total), bw);
      fprintf(f, " iter %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT, it,
              json_integer_value(total));
    } else {
      fprintf(f, "iter %" JSON_INTEGER_FORMAT, it);
    }
    fprintf(f, "  run %" JSON_INTEGER_FORMAT " (%s), %.1f s\n", sw_json_int(ss, "run"),
            sw_json_str(json_object_get(ss, "arm"), "?"),
            json_number_value(json_object_get(ss, "train_s")));
  }
  fprintf(f, "  %d worker(s) on this sweep, %d other session(s)\n", busy, others);
  fclose(f);
  return buf;
}

/* ---- plain lines ---------------------------------------------------------------------------- */

/* Prints line under key unless it is what was printed for key last time. */
static void say(FILE *out, json_t *seen, const char *key, const char *line) {
  if (!strcmp(sw_json_str(json_object_get(seen, key), ""), line)) return;
  fprintf(out, "%s\n", line);
  json_object_set_new(seen, key, json_string(line));
}

static void plain_lines(FILE *out, json_t *seen, const json_t *status, const json_t *sweep) {
  char key[200], line[700];
  json_int_t id = sw_json_int(sweep, "id");
  const json_t *sp = json_object_get(sweep, "pairs");
  snprintf(line, sizeof line, "sweep %" JSON_INTEGER_FORMAT " %s: %s", id,
           sw_json_str(json_object_get(sweep, "name"), "?"),
           sw_json_str(json_object_get(sweep, "status"), "?"));
  say(out, seen, "sweep", line);
  if (!strcmp(sw_json_str(json_object_get(sweep, "kind"), ""), "grid")) {
    snprintf(line, sizeof line, "runs %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT " done",
             sw_json_int(sp, "done"), sw_json_int(sp, "total"));
    say(out, seen, "runs", line);
  }
  size_t i;
  json_t *g;
  json_array_foreach(json_object_get(sweep, "gates"), i, g) {
    json_int_t done, planned;
    gate_counts(g, &done, &planned);
    char ft[400];
    forming_text(g, ft, sizeof ft);
    snprintf(line, sizeof line,
             "gate %s: pairs %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
             ", looks %" JSON_INTEGER_FORMAT "%s%s",
             sw_json_str(json_object_get(g, "name"), "?"), done, planned, sw_json_int(g, "looks"),
             ft[0] ? ", " : "", ft);
    snprintf(key, sizeof key, "gate/%s", sw_json_str(json_object_get(g, "name"), "?"));
    say(out, seen, key, line);
  }
  json_t *ss;
  json_array_foreach(json_object_get(json_object_get(status, "coordinator"), "sessions"), i, ss) {
    if (!session_on(ss, id)) continue;
    const json_t *total = json_object_get(ss, "iterations");
    json_int_t it = sw_json_int(ss, "iter");
    /* A line when a run starts and at each quarter of it: enough to follow, short in a log. */
    if (json_is_integer(total) && json_integer_value(total) > 0) {
      json_int_t q = it * 4 / json_integer_value(total);
      snprintf(line, sizeof line,
               "worker %s: run %" JSON_INTEGER_FORMAT " (%s) iter %" JSON_INTEGER_FORMAT
               "/%" JSON_INTEGER_FORMAT " (%d%%)",
               sw_json_str(json_object_get(ss, "id"), "?"), sw_json_int(ss, "run"),
               sw_json_str(json_object_get(ss, "arm"), "?"), q * json_integer_value(total) / 4,
               json_integer_value(total), (int)(q > 4 ? 100 : q * 25));
    } else {
      snprintf(line, sizeof line, "worker %s: run %" JSON_INTEGER_FORMAT " (%s) started",
               sw_json_str(json_object_get(ss, "id"), "?"), sw_json_int(ss, "run"),
               sw_json_str(json_object_get(ss, "arm"), "?"));
    }
    snprintf(key, sizeof key, "worker/%s", sw_json_str(json_object_get(ss, "id"), "?"));
    say(out, seen, key, line);
  }
}

/* ---- the loop ------------------------------------------------------------------------------- */

static void nap(int ms, const volatile sig_atomic_t *stop) {
  for (int left = ms; left > 0 && !(stop && *stop); left -= 100) {
    struct timespec ts = {0, (left < 100 ? left : 100) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR && !(stop && *stop)) {}
  }
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* The closing lines: each gate's verdict and the outcome. */
static void final_lines(FILE *out, const json_t *sweep, int code) {
  size_t i;
  json_t *g;
  json_array_foreach(json_object_get(sweep, "gates"), i, g)
      fprintf(out, "verdict: gate %s: %s (%s)\n", sw_json_str(json_object_get(g, "name"), "?"),
              sw_json_str(json_object_get(g, "verdict"), "none"),
              sw_json_str(json_object_get(g, "status"), "?"));
  fprintf(out, "sweep %" JSON_INTEGER_FORMAT " %s: %s (exit %d)\n", sw_json_int(sweep, "id"),
          sw_json_str(json_object_get(sweep, "name"), "?"),
          sw_json_str(json_object_get(sweep, "status"), "?"), code);
}

int sw_watch_run(const struct sw_watch_opts *o, sw_watch_fetch_fn fetch, void *ctx, FILE *out,
                 struct sw_err *err) {
  int interval = o->interval_ms > 0 ? o->interval_ms : 1000;
  int64_t sweep_id = o->sweep_id;
  json_t *seen = json_object();
  int drawn = 0, code = SW_WATCH_EXIT_FAILED;
  for (;;) {
    if (o->stop && *o->stop) {
      sw_err_set(err, SW_EINVAL, "interrupted");
      break;
    }
    json_t *st = NULL;
    int rc = fetch(ctx, sweep_id, &st, err);
    if (rc) break;
    const json_t *sw = sw_watch_pick(st, sweep_id);
    if (!sw) {
      sw_err_set(err, SW_ENOTFOUND, sweep_id ? "no sweep %lld" : "no sweep to watch",
                 (long long)sweep_id);
      json_decref(st);
      break;
    }
    sweep_id = sw_json_int(sw, "id"); /* follow this one from now on, even when another starts */
    int end = sw_watch_outcome(sw);
    if (o->tty) {
      char *screen = sw_watch_render(st, sw, o->width);
      if (screen) {
        /* Back to the top of the previous screen, then each line over the old one. */
        if (drawn) fprintf(out, "\033[%dA", drawn);
        for (char *p = screen, *nl; *p; p = nl + 1) {
          nl = strchr(p, '\n');
          fprintf(out, "%.*s\033[K\n", (int)(nl - p), p);
        }
        fputs("\033[J", out);
        drawn = count_lines(screen);
        free(screen);
      }
    } else {
      plain_lines(out, seen, st, sw);
    }
    if (end >= 0) {
      final_lines(out, sw, end);
      code = end;
      json_decref(st);
      break;
    }
    json_decref(st);
    fflush(out);
    nap(interval, o->stop);
  }
  fflush(out);
  json_decref(seen);
  return code;
}

/* ---- the text status ------------------------------------------------------------------------ */

char *sw_watch_status_text(const json_t *st) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  size_t i;
  const json_t *sw;
  const json_t *sto = json_object_get(st, "store");
  if (json_is_true(json_object_get(sto, "failing"))) {
    time_t since = (time_t)(json_integer_value(json_object_get(sto, "failing_since_ms")) / 1000);
    struct tm tm;
    char when[32] = "?";
    if (localtime_r(&since, &tm)) strftime(when, sizeof when, "%H:%M:%S", &tm);
    fprintf(f,
            "store: FAILING since %s (%" JSON_INTEGER_FORMAT " failures, %" JSON_INTEGER_FORMAT
            " results not stored yet, kept by their workers); last: %s\n",
            when, json_integer_value(json_object_get(sto, "failures")),
            json_integer_value(json_object_get(sto, "results_not_stored")),
            sw_json_str(json_object_get(sto, "last_error"), "?"));
  } else if (json_integer_value(json_object_get(sto, "failures")) > 0) {
    fprintf(f, "store: ok (%" JSON_INTEGER_FORMAT " failures since start; last: %s)\n",
            json_integer_value(json_object_get(sto, "failures")),
            sw_json_str(json_object_get(sto, "last_error"), "?"));
  }
  if (json_is_string(json_object_get(st, "sweeps_unavailable")))
    fprintf(f, "sweeps: cannot be read from the store: %s\n",
            json_string_value(json_object_get(st, "sweeps_unavailable")));
  json_array_foreach(json_object_get(st, "sweeps"), i, sw) {
    fprintf(f, "sweep %" JSON_INTEGER_FORMAT " %s: %s\n",
            json_integer_value(json_object_get(sw, "id")),
            sw_json_str(json_object_get(sw, "name"), "?"),
            sw_json_str(json_object_get(sw, "status"), "?"));
    const json_t *sp = json_object_get(sw, "pairs");
    if (json_is_object(sp))
      fprintf(f,
              "  %s done %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
              " (leased %" JSON_INTEGER_FORMAT ", pending %" JSON_INTEGER_FORMAT
              ", failed %" JSON_INTEGER_FORMAT ")\n",
              json_is_string(json_object_get(sw, "kind")) &&
                      !strcmp(json_string_value(json_object_get(sw, "kind")), "grid")
                  ? "runs"
                  : "pairs",
              json_integer_value(json_object_get(sp, "done")),
              json_integer_value(json_object_get(sp, "total")),
              json_integer_value(json_object_get(sp, "leased")),
              json_integer_value(json_object_get(sp, "pending")),
              json_integer_value(json_object_get(sp, "failed")));
    size_t k;
    const json_t *g;
    json_array_foreach(json_object_get(sw, "gates"), k, g) {
      const json_t *p = json_object_get(g, "pairs");
      fprintf(f,
              "  gate %s: %s%s%s  pairs done %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
              " (leased %" JSON_INTEGER_FORMAT ", pending %" JSON_INTEGER_FORMAT ")\n",
              sw_json_str(json_object_get(g, "name"), "?"),
              sw_json_str(json_object_get(g, "status"), "?"),
              json_is_string(json_object_get(g, "verdict")) ? ", verdict " : "",
              sw_json_str(json_object_get(g, "verdict"), ""),
              json_integer_value(json_object_get(p, "done")),
              json_integer_value(json_object_get(p, "total")),
              json_integer_value(json_object_get(p, "leased")),
              json_integer_value(json_object_get(p, "pending")));
    }
  }
  const json_t *co = json_object_get(st, "coordinator");
  const json_t *ss;
  json_array_foreach(json_object_get(co, "sessions"), i, ss) {
    fprintf(f,
            "worker %s: %s lease %" JSON_INTEGER_FORMAT " run %" JSON_INTEGER_FORMAT
            " iter %" JSON_INTEGER_FORMAT " runs finished %" JSON_INTEGER_FORMAT "\n",
            sw_json_str(json_object_get(ss, "id"), "?"),
            json_is_true(json_object_get(ss, "waiting")) ? "waiting" : "busy",
            json_integer_value(json_object_get(ss, "lease")),
            json_integer_value(json_object_get(ss, "run")),
            json_integer_value(json_object_get(ss, "iter")),
            json_integer_value(json_object_get(ss, "runs_finished")));
  }
  fclose(f);
  return buf;
}

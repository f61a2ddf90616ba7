/* sw_pareto.c: Pareto points, front and matched comparisons from the store's grid runs and
 * gate arms, and their renderings (text, Markdown, JSON, CSV, HTML with a Chart.js scatter).
 * Definitions are in sw_pareto.h and docs/pareto-audit.md. */
#include "sw_pareto.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_fs.h"
#include "sw_html.h"
#include "sw_json.h"
#include "sw_spec.h"

int sw_pareto_format_parse(const char *name, enum sw_pareto_format *out, struct sw_err *err) {
  static const struct {
    const char *name;
    enum sw_pareto_format f;
  } F[] = {{"text", SW_PARETO_TEXT}, {"md", SW_PARETO_MD},   {"markdown", SW_PARETO_MD},
           {"json", SW_PARETO_JSON}, {"csv", SW_PARETO_CSV}, {"html", SW_PARETO_HTML}};
  for (size_t i = 0; name && i < sizeof F / sizeof F[0]; i++)
    if (strcmp(name, F[i].name) == 0) {
      *out = F[i].f;
      return 0;
    }
  return sw_err_set(err, SW_EINVAL, "unknown pareto format '%s' (text, md, json, csv or html)",
                    name ? name : "");
}

/* ---- interpolation -------------------------------------------------------------------------- */

int sw_pareto_psnr_at_time(const struct sw_pareto_pt *c, int n, double t, double *out) {
  if (n < 1) return SW_EINVAL;
  /* Walk in iteration order and take the first segment that brackets t: train_s grows with
   * iterations, so that is the segment where the curve passes the time. */
  double tmin = c[0].train_s, tmax = c[0].train_s;
  for (int i = 0; i < n; i++) {
    if (c[i].train_s < tmin) tmin = c[i].train_s;
    if (c[i].train_s > tmax) tmax = c[i].train_s;
    if (c[i].train_s == t) {
      *out = c[i].psnr_db;
      return 0;
    }
    if (i > 0) {
      double t0 = c[i - 1].train_s, t1 = c[i].train_s;
      if ((t0 < t && t < t1) || (t1 < t && t < t0)) {
        double f = (t - t0) / (t1 - t0);
        *out = c[i - 1].psnr_db + f * (c[i].psnr_db - c[i - 1].psnr_db);
        return 0;
      }
    }
  }
  return t < tmin ? 1 : 2;
}

int sw_pareto_time_to_psnr(const struct sw_pareto_pt *c, int n, double psnr, double *out) {
  if (n < 1) return SW_EINVAL;
  for (int i = 0; i < n; i++) {
    if (c[i].psnr_db < psnr) continue;
    if (i == 0) {
      *out = c[0].train_s; /* reached at or before the first point: an upper bound only */
      return 1;
    }
    double p0 = c[i - 1].psnr_db, p1 = c[i].psnr_db;
    double f = p1 > p0 ? (psnr - p0) / (p1 - p0) : 1.0;
    *out = c[i - 1].train_s + f * (c[i].train_s - c[i - 1].train_s);
    return 0;
  }
  return 2;
}

/* ---- collecting samples --------------------------------------------------------------------- */

/* One measured (iteration, train_s, psnr_db) of one attempt: its final metrics or a checkpoint. */
struct sample {
  int cfg;
  int64_t iter;
  double t, psnr;
  int final;
};

struct config {
  char id[600];
  char label[520];
  char gate[200];
  char arm[80];
  char sweep[200];
  char kind[8];
  char trainer[120];
  int64_t sweep_id;
  json_t *params; /* grid series parameters (without iterations); NULL for gate arms */
};

struct point {
  int cfg;
  int64_t iter;
  int final, n;
  double t_mean, t_sd, p_mean, p_sd;
  int on_front;
};

struct collect {
  struct config *cfg;
  int n_cfg, cap_cfg;
  struct sample *s;
  int n_s, cap_s;
  struct point *p;
  int n_p, cap_p;
};

static void collect_free(struct collect *c) {
  for (int i = 0; i < c->n_cfg; i++) json_decref(c->cfg[i].params);
  free(c->cfg);
  free(c->s);
  free(c->p);
  memset(c, 0, sizeof *c);
}

static int grow(void **arr, int *cap, int n, size_t elem) {
  if (n < *cap) return 0;
  int nc = *cap ? *cap * 2 : 16;
  void *p = realloc(*arr, (size_t)nc * elem);
  if (!p) return -1;
  *arr = p;
  *cap = nc;
  return 0;
}

/* Finds or adds the configuration of a run; returns its index or -1 (out of memory). */
static int config_of(struct collect *c, int64_t sweep_id, const char *sweep, const char *kind,
                     const char *gate, const char *arm, const json_t *params, const char *trainer) {
  char label[520];
  json_t *series = NULL;
  if (gate) {
    snprintf(label, sizeof label, "%s", arm);
  } else {
    series = json_is_object(params) ? json_deep_copy(params) : json_object();
    json_object_del(series, "iterations");
    sw_spec_label(series, label, sizeof label); /* the grid point's label less iterations */
  }
  for (int i = 0; i < c->n_cfg; i++) {
    struct config *f = &c->cfg[i];
    if (f->sweep_id == sweep_id && strcmp(f->label, label) == 0 &&
        strcmp(f->gate, gate ? gate : "") == 0) {
      json_decref(series);
      if (!f->trainer[0] && trainer) snprintf(f->trainer, sizeof f->trainer, "%s", trainer);
      return i;
    }
  }
  if (grow((void **)&c->cfg, &c->cap_cfg, c->n_cfg, sizeof *c->cfg)) {
    json_decref(series);
    return -1;
  }
  struct config *f = &c->cfg[c->n_cfg];
  memset(f, 0, sizeof *f);
  f->sweep_id = sweep_id;
  snprintf(f->sweep, sizeof f->sweep, "%s", sweep);
  snprintf(f->kind, sizeof f->kind, "%s", kind);
  snprintf(f->label, sizeof f->label, "%s", label);
  snprintf(f->gate, sizeof f->gate, "%s", gate ? gate : "");
  snprintf(f->arm, sizeof f->arm, "%s", gate ? arm : "");
  snprintf(f->trainer, sizeof f->trainer, "%s", trainer ? trainer : "");
  f->params = series;
  if (gate)
    snprintf(f->id, sizeof f->id, "%lld:%s/%s", (long long)sweep_id, gate, arm);
  else if (strcmp(label, "base") == 0)
    snprintf(f->id, sizeof f->id, "%lld:%s", (long long)sweep_id, sweep);
  else
    snprintf(f->id, sizeof f->id, "%lld:%s/%s", (long long)sweep_id, sweep, label);
  return c->n_cfg++;
}

static int add_sample(struct collect *c, int cfg, int64_t iter, double t, double psnr, int final) {
  if (grow((void **)&c->s, &c->cap_s, c->n_s, sizeof *c->s)) return -1;
  c->s[c->n_s++] = (struct sample){cfg, iter, t, psnr, final};
  return 0;
}

static int collect_checkpoints(sw_store_t *store, struct collect *c, int cfg, int64_t attempt_id,
                               struct sw_err *err) {
  static const char *const SQL = "SELECT iter, train_s, psnr_db FROM checkpoints WHERE "
                                 "attempt_id = ?1 AND train_s IS NOT NULL AND psnr_db IS NOT NULL "
                                 "ORDER BY iter";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, attempt_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (add_sample(c, cfg, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1),
                   sqlite3_column_double(st, 2), 0)) {
      sqlite3_reset(st);
      return sw_err_set(err, SW_ENOMEM, "pareto: out of memory");
    }
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(store, err, "reading checkpoints");
}

/* Every ok attempt of the selected sweeps: its final point and its checkpoints. */
static int collect_samples(sw_store_t *store, int64_t sweep_id, struct collect *c,
                           struct sw_err *err) {
  static const char *const SQL =
      "SELECT s.id, s.name, s.kind, g.name, r.arm, gp.params_json, a.id, a.train_s, a.psnr_db, "
      "a.iterations, r.config_json, a.result_json FROM attempts a JOIN runs r ON r.id = a.run_id "
      "JOIN pairs p ON p.id = r.pair_id JOIN sweeps s ON s.id = p.sweep_id "
      "LEFT JOIN gates g ON g.id = p.gate_id LEFT JOIN grid_points gp ON gp.id = p.point_id "
      "WHERE a.status = 'ok' AND (?1 = 0 OR s.id = ?1) ORDER BY s.id, COALESCE(p.gate_id, 0), "
      "CASE r.arm WHEN 'off' THEN 0 WHEN 'on' THEN 1 ELSE 2 END, p.idx, a.id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int is_gate = sqlite3_column_type(st, 3) != SQLITE_NULL;
    json_t *params = is_gate ? NULL : json_loads(sw_store_col_text(st, 5), 0, NULL);
    json_t *result = json_loads(sw_store_col_text(st, 11), 0, NULL);
    const char *trainer =
        json_string_value(json_object_get(json_object_get(result, "trainer"), "name"));
    int cfg = config_of(c, sqlite3_column_int64(st, 0), sw_store_col_text(st, 1),
                        sw_store_col_text(st, 2), is_gate ? sw_store_col_text(st, 3) : NULL,
                        sw_store_col_text(st, 4), params, trainer);
    json_decref(params);
    json_decref(result);
    if (cfg < 0) {
      rc = sw_err_set(err, SW_ENOMEM, "pareto: out of memory");
      break;
    }
    /* The run's length: what the trainer reports, else what it was asked for. */
    int64_t iters = -1;
    if (sqlite3_column_type(st, 9) != SQLITE_NULL) {
      iters = sqlite3_column_int64(st, 9);
    } else {
      json_t *conf = json_loads(sw_store_col_text(st, 10), 0, NULL);
      json_t *it = json_object_get(conf, "iterations");
      if (json_is_integer(it)) iters = json_integer_value(it);
      json_decref(conf);
    }
    if (iters > 0 && sqlite3_column_type(st, 7) != SQLITE_NULL &&
        sqlite3_column_type(st, 8) != SQLITE_NULL &&
        add_sample(c, cfg, iters, sqlite3_column_double(st, 7), sqlite3_column_double(st, 8), 1)) {
      rc = sw_err_set(err, SW_ENOMEM, "pareto: out of memory");
      break;
    }
    if ((rc = collect_checkpoints(store, c, cfg, sqlite3_column_int64(st, 6), err))) break;
  }
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return 0;
  if (rc == SQLITE_ROW || rc > 0) return sw_store_fail(store, err, "reading attempts");
  return rc;
}

/* ---- aggregation ---------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void mean_sd(const double *v, int n, double *mean, double *sd) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  *mean = s / n;
  double q = 0;
  for (int i = 0; i < n; i++) q += (v[i] - *mean) * (v[i] - *mean);
  *sd = n > 1 ? sqrt(q / (n - 1)) : NAN;
}

/* Points of every configuration: budgets where runs end use their final metrics, the other
 * budgets the checkpoints there. */
static int aggregate(struct collect *c, struct sw_err *err) {
  int64_t *iters = malloc(((size_t)c->n_s + 1) * sizeof *iters);
  double *tv = malloc(((size_t)c->n_s + 1) * sizeof *tv);
  double *pv = malloc(((size_t)c->n_s + 1) * sizeof *pv);
  int rc = 0;
  if (!iters || !tv || !pv) {
    rc = sw_err_set(err, SW_ENOMEM, "pareto: out of memory");
    goto out;
  }
  for (int f = 0; f < c->n_cfg && !rc; f++) {
    int ni = 0;
    for (int i = 0; i < c->n_s; i++)
      if (c->s[i].cfg == f) iters[ni++] = c->s[i].iter;
    qsort(iters, (size_t)ni, sizeof *iters, cmp_i64);
    for (int k = 0; k < ni; k++) {
      if (k > 0 && iters[k] == iters[k - 1]) continue;
      int has_final = 0;
      for (int i = 0; i < c->n_s; i++)
        if (c->s[i].cfg == f && c->s[i].iter == iters[k] && c->s[i].final) has_final = 1;
      int n = 0;
      for (int i = 0; i < c->n_s; i++) {
        const struct sample *s = &c->s[i];
        if (s->cfg != f || s->iter != iters[k] || s->final != has_final) continue;
        tv[n] = s->t;
        pv[n] = s->psnr;
        n++;
      }
      if (grow((void **)&c->p, &c->cap_p, c->n_p, sizeof *c->p)) {
        rc = sw_err_set(err, SW_ENOMEM, "pareto: out of memory");
        break;
      }
      struct point *p = &c->p[c->n_p++];
      memset(p, 0, sizeof *p);
      p->cfg = f;
      p->iter = iters[k];
      p->final = has_final;
      p->n = n;
      mean_sd(tv, n, &p->t_mean, &p->t_sd);
      mean_sd(pv, n, &p->p_mean, &p->p_sd);
    }
  }
  /* The front over every point of every configuration. */
  for (int i = 0; i < c->n_p; i++) {
    struct point *a = &c->p[i];
    a->on_front = 1;
    for (int j = 0; j < c->n_p && a->on_front; j++) {
      const struct point *b = &c->p[j];
      if (j == i) continue;
      if (b->t_mean <= a->t_mean && b->p_mean >= a->p_mean &&
          (b->t_mean < a->t_mean || b->p_mean > a->p_mean))
        a->on_front = 0;
    }
  }
out:
  free(iters);
  free(tv);
  free(pv);
  return rc;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static json_t *stat_json(double mean, double sd, int n) {
  return json_pack("{s:o,s:o,s:i}", "mean", sw_json_real_or_null(mean), "sd",
                   sw_json_real_or_null(sd), "n", n);
}

/* The curve of a configuration in iteration order (points are already sorted per config). */
static int curve_of(const struct collect *c, int cfg, struct sw_pareto_pt *out) {
  int n = 0;
  for (int i = 0; i < c->n_p; i++)
    if (c->p[i].cfg == cfg)
      out[n++] = (struct sw_pareto_pt){(double)c->p[i].iter, c->p[i].t_mean, c->p[i].p_mean};
  return n;
}

static const char *beyond_note(char *buf, size_t len, int code, int is_time,
                               const struct sw_pareto_pt *cv, int n) {
  if (code == 1 && is_time)
    snprintf(buf, len, "before the other's first point (%.0f it, %.3f s)", cv[0].iter,
             cv[0].train_s);
  else if (code == 2 && is_time)
    snprintf(buf, len, "after the other's last point (%.0f it, %.3f s, %.3f dB)", cv[n - 1].iter,
             cv[n - 1].train_s, cv[n - 1].psnr_db);
  else if (code == 1)
    snprintf(buf, len, "the other's first point (%.0f it, %.3f s) already reaches it", cv[0].iter,
             cv[0].train_s);
  else
    snprintf(buf, len, "never reached by the other (best %.3f dB)", cv[n - 1].psnr_db);
  return buf;
}

/* Matched-wallclock and matched-PSNR rows at every point of `self` against `other`. */
static void matched_rows(const char *tag, const struct sw_pareto_pt *self, int ns,
                         const struct sw_pareto_pt *other, int no, json_t *wall, json_t *psnr) {
  char note[160];
  for (int i = 0; i < ns; i++) {
    double v;
    int code = sw_pareto_psnr_at_time(other, no, self[i].train_s, &v);
    json_t *r = json_pack("{s:s,s:f,s:f,s:f}", "at", tag, "iter", self[i].iter, "train_s",
                          self[i].train_s, "psnr_db", self[i].psnr_db);
    json_object_set_new(r, "other_psnr_db", code == 0 ? sw_json_real_or_null(v) : json_null());
    json_object_set_new(r, "psnr_diff",
                        code == 0 ? sw_json_real_or_null(v - self[i].psnr_db) : json_null());
    if (code)
      json_object_set_new(r, "note",
                          json_string(beyond_note(note, sizeof note, code, 1, other, no)));
    json_array_append_new(wall, r);

    code = sw_pareto_time_to_psnr(other, no, self[i].psnr_db, &v);
    r = json_pack("{s:s,s:f,s:f,s:f}", "at", tag, "iter", self[i].iter, "psnr_db", self[i].psnr_db,
                  "train_s", self[i].train_s);
    json_object_set_new(r, "other_train_s", code == 0 ? sw_json_real_or_null(v) : json_null());
    json_object_set_new(r, "time_ratio",
                        code == 0 && self[i].train_s > 0 ? sw_json_real_or_null(v / self[i].train_s)
                                                         : json_null());
    if (code)
      json_object_set_new(r, "note",
                          json_string(beyond_note(note, sizeof note, code, 0, other, no)));
    json_array_append_new(psnr, r);
  }
}

static json_t *comparison(const struct collect *c, int a, int b) {
  struct sw_pareto_pt *ca = malloc(((size_t)c->n_p + 1) * sizeof *ca);
  struct sw_pareto_pt *cb = malloc(((size_t)c->n_p + 1) * sizeof *cb);
  if (!ca || !cb) {
    free(ca);
    free(cb);
    return NULL;
  }
  int na = curve_of(c, a, ca), nb = curve_of(c, b, cb);
  json_t *o = json_pack("{s:s,s:s}", "a", c->cfg[a].id, "b", c->cfg[b].id);
  json_t *mi = json_array(), *mw = json_array(), *mp = json_array();
  for (int i = 0; i < c->n_p; i++)
    for (int j = 0; j < c->n_p; j++) {
      const struct point *pa = &c->p[i], *pb = &c->p[j];
      if (pa->cfg != a || pb->cfg != b || pa->iter != pb->iter) continue;
      json_t *r = json_pack("{s:I,s:f,s:f,s:f,s:f,s:i,s:i}", "iter", (json_int_t)pa->iter,
                            "a_train_s", pa->t_mean, "b_train_s", pb->t_mean, "a_psnr_db",
                            pa->p_mean, "b_psnr_db", pb->p_mean, "a_n", pa->n, "b_n", pb->n);
      double ratio = pa->t_mean > 0 ? pb->t_mean / pa->t_mean : NAN;
      /* Standard errors from the repeats (NaN -> null when either side has n = 1): the lab's
       * PSNR scatters 0.05-0.1 dB run to run, so a difference is read against its error. */
      double sea = pa->t_sd / sqrt(pa->n), seb = pb->t_sd / sqrt(pb->n);
      double ratio_se = ratio * sqrt(pow(sea / pa->t_mean, 2) + pow(seb / pb->t_mean, 2));
      double diff_se = sqrt(pa->p_sd * pa->p_sd / pa->n + pb->p_sd * pb->p_sd / pb->n);
      json_object_set_new(r, "time_ratio", sw_json_real_or_null(ratio));
      json_object_set_new(r, "time_ratio_se", sw_json_real_or_null(ratio_se));
      json_object_set_new(r, "psnr_diff", sw_json_real_or_null(pb->p_mean - pa->p_mean));
      json_object_set_new(r, "psnr_diff_se", sw_json_real_or_null(diff_se));
      json_array_append_new(mi, r);
    }
  matched_rows("a", ca, na, cb, nb, mw, mp);
  matched_rows("b", cb, nb, ca, na, mw, mp);
  json_object_set_new(o, "matched_iteration", mi);
  json_object_set_new(o, "matched_wallclock", mw);
  json_object_set_new(o, "matched_psnr", mp);
  free(ca);
  free(cb);
  return o;
}

/* A configuration named on the command line: its full id, the id without "N:", or a unique
 * suffix after ':' or '/'. */
static int find_config(const struct collect *c, const char *name, int *out, struct sw_err *err) {
  int found = -1, n = 0;
  size_t ln = strlen(name);
  for (int pass = 0; pass < 3 && n == 0; pass++) {
    for (int i = 0; i < c->n_cfg; i++) {
      const char *id = c->cfg[i].id;
      const char *colon = strchr(id, ':');
      size_t li = strlen(id);
      int hit = pass == 0   ? strcmp(id, name) == 0
                : pass == 1 ? (colon && strcmp(colon + 1, name) == 0)
                            : (li > ln && strcmp(id + li - ln, name) == 0 &&
                               (id[li - ln - 1] == '/' || id[li - ln - 1] == ':'));
      if (hit) {
        found = i;
        n++;
      }
    }
  }
  if (n == 1) {
    *out = found;
    return 0;
  }
  char known[400] = "";
  for (int i = 0; i < c->n_cfg; i++) {
    size_t used = strlen(known);
    snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", c->cfg[i].id);
  }
  return sw_err_set(err, SW_EINVAL, "pareto: %s configuration '%s' (known: %s)",
                    n ? "ambiguous" : "unknown", name, c->n_cfg ? known : "none");
}

int sw_pareto_resolve_sweep(sw_store_t *store, const char *arg, int64_t *id, struct sw_err *err) {
  static const char *const SQL =
      "SELECT id FROM sweeps WHERE id = ?1 OR name = ?2 ORDER BY (id = ?1) DESC, id DESC LIMIT 1";
  char *end;
  errno = 0;
  long long v = strtoll(arg, &end, 10);
  int numeric = !errno && end != arg && !*end && v > 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, numeric ? v : -1);
  sqlite3_bind_text(st, 2, arg, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW) return 0;
  if (rc != SQLITE_DONE) return sw_store_fail(store, err, "looking up sweep");
  return sw_err_set(err, SW_ENOTFOUND, "no sweep '%s' in %s", arg, sw_store_path(store));
}

static int sweep_exists(sw_store_t *store, int64_t id, struct sw_err *err) {
  static const char *const SQL = "SELECT 1 FROM sweeps WHERE id = ?1";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, id);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW) return 0;
  if (rc != SQLITE_DONE) return sw_store_fail(store, err, "looking up sweep");
  return sw_err_set(err, SW_ENOTFOUND, "no sweep %lld in %s", (long long)id, sw_store_path(store));
}

static json_t *to_json(const struct collect *c, const struct sw_pareto_opts *o,
                       struct sw_err *err) {
  json_t *root = json_object(), *cfgs = json_array(), *front = json_array(), *cmps = json_array();
  json_object_set_new(root, "sweep_id", o->sweep_id ? json_integer(o->sweep_id) : json_null());
  json_object_set_new(root, "configurations", cfgs);
  json_object_set_new(root, "front", front);
  json_object_set_new(root, "comparisons", cmps);
  for (int f = 0; f < c->n_cfg; f++) {
    const struct config *g = &c->cfg[f];
    json_t *pts = json_array();
    json_t *cj = json_pack("{s:s,s:I,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "id", g->id, "sweep_id",
                           (json_int_t)g->sweep_id, "sweep", g->sweep, "kind", g->kind, "label",
                           g->label, "gate", g->gate[0] ? json_string(g->gate) : json_null(), "arm",
                           g->gate[0] ? json_string(g->arm) : json_null(), "params",
                           g->params ? json_incref(g->params) : json_null(), "trainer",
                           g->trainer[0] ? json_string(g->trainer) : json_null());
    for (int i = 0; i < c->n_p; i++) {
      const struct point *p = &c->p[i];
      if (p->cfg != f) continue;
      json_array_append_new(pts, json_pack("{s:I,s:s,s:i,s:o,s:o,s:b}", "iter", (json_int_t)p->iter,
                                           "source", p->final ? "final" : "checkpoint", "n", p->n,
                                           "train_s", stat_json(p->t_mean, p->t_sd, p->n),
                                           "psnr_db", stat_json(p->p_mean, p->p_sd, p->n),
                                           "on_front", p->on_front));
    }
    json_object_set_new(cj, "points", pts);
    json_array_append_new(cfgs, cj);
  }
  /* The front in time order, the way one reads a trade-off curve. */
  int *order = malloc(((size_t)c->n_p + 1) * sizeof *order);
  int nf = 0;
  for (int i = 0; order && i < c->n_p; i++)
    if (c->p[i].on_front) order[nf++] = i;
  for (int i = 1; i < nf; i++)
    for (int j = i; j > 0 && c->p[order[j]].t_mean < c->p[order[j - 1]].t_mean; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 0; i < nf; i++) {
    const struct point *p = &c->p[order[i]];
    json_array_append_new(front, json_pack("{s:s,s:I,s:f,s:f,s:i}", "config", c->cfg[p->cfg].id,
                                           "iter", (json_int_t)p->iter, "train_s", p->t_mean,
                                           "psnr_db", p->p_mean, "n", p->n));
  }
  free(order);

  if (o->compare_a || o->compare_b) {
    int a, b;
    if (!o->compare_a || !o->compare_b) {
      sw_err_set(err, SW_EINVAL,
                 "pareto: a comparison needs two configurations (--compare A "
                 "--against B)");
      goto fail;
    }
    if (find_config(c, o->compare_a, &a, err) || find_config(c, o->compare_b, &b, err)) goto fail;
    json_array_append_new(cmps, comparison(c, a, b));
  } else {
    /* Defaults: every gate's off vs on, and a grid selection of exactly two series. */
    int grid[2], ng = 0;
    for (int f = 0; f < c->n_cfg; f++) {
      const struct config *g = &c->cfg[f];
      if (!g->gate[0]) {
        if (ng < 2) grid[ng] = f;
        ng++;
        continue;
      }
      if (strcmp(g->arm, "off") != 0) continue;
      for (int h = 0; h < c->n_cfg; h++)
        if (c->cfg[h].sweep_id == g->sweep_id && strcmp(c->cfg[h].gate, g->gate) == 0 &&
            strcmp(c->cfg[h].arm, "on") == 0)
          json_array_append_new(cmps, comparison(c, f, h));
    }
    if (ng == 2) json_array_append_new(cmps, comparison(c, grid[0], grid[1]));
  }
  return root;
fail:
  json_decref(root);
  return NULL;
}

json_t *sw_pareto_json(sw_store_t *store, const struct sw_pareto_opts *opts, struct sw_err *err) {
  struct sw_pareto_opts none = {0};
  const struct sw_pareto_opts *o = opts ? opts : &none;
  if (o->sweep_id > 0 && sweep_exists(store, o->sweep_id, err)) return NULL;
  struct collect c;
  memset(&c, 0, sizeof c);
  json_t *root = NULL;
  if (!collect_samples(store, o->sweep_id, &c, err) && !aggregate(&c, err))
    root = to_json(&c, o, err);
  collect_free(&c);
  return root;
}

/* ---- rendering ------------------------------------------------------------------------------- */

static double jstat(const json_t *o, const char *k, const char *f) {
  return sw_json_num(json_object_get(o, k), f);
}

static void fmt(char *buf, size_t len, double v, int digits) {
  if (isfinite(v))
    snprintf(buf, len, "%.*f", digits, v);
  else
    snprintf(buf, len, "-");
}

static void print_config(FILE *out, const json_t *cj, int md) {
  const char *trainer = json_string_value(json_object_get(cj, "trainer"));
  fprintf(out, md ? "\n### %s\n\n%s%s%s\n\n" : "\nconfiguration %s (%s%s%s)\n",
          json_string_value(json_object_get(cj, "id")),
          json_string_value(json_object_get(cj, "kind")), trainer ? ", " : "",
          trainer ? trainer : "");
  if (md)
    fprintf(out, "| iterations | source | n | train_s mean | sd | psnr_db mean | sd | front |\n"
                 "| ---: | --- | ---: | ---: | ---: | ---: | ---: | :---: |\n");
  else
    fprintf(out, "  %10s  %-10s %3s  %12s %9s  %12s %8s  %s\n", "iterations", "source", "n",
            "train_s", "sd", "psnr_db", "sd", "front");
  size_t i;
  const json_t *p;
  json_array_foreach(json_object_get(cj, "points"), i, p) {
    char t[32], ts[32], q[32], qs[32];
    fmt(t, sizeof t, jstat(p, "train_s", "mean"), 3);
    fmt(ts, sizeof ts, jstat(p, "train_s", "sd"), 3);
    fmt(q, sizeof q, jstat(p, "psnr_db", "mean"), 3);
    fmt(qs, sizeof qs, jstat(p, "psnr_db", "sd"), 3);
    long long it = (long long)json_integer_value(json_object_get(p, "iter"));
    const char *src = json_string_value(json_object_get(p, "source"));
    int n = (int)json_integer_value(json_object_get(p, "n"));
    int fr = json_is_true(json_object_get(p, "on_front"));
    if (md)
      fprintf(out, "| %lld | %s | %d | %s | %s | %s | %s | %s |\n", it, src, n, t, ts, q, qs,
              fr ? "yes" : "");
    else
      fprintf(out, "  %10lld  %-10s %3d  %12s %9s  %12s %8s  %s\n", it, src, n, t, ts, q, qs,
              fr ? "*" : "");
  }
}

static void print_comparison(FILE *out, const json_t *cmp, int md) {
  const char *a = json_string_value(json_object_get(cmp, "a"));
  const char *b = json_string_value(json_object_get(cmp, "b"));
  fprintf(out, md ? "\n### %s (A) vs %s (B)\n" : "\ncomparison A = %s vs B = %s\n", a, b);
  fprintf(out,
          md ? "\nMatched iteration (se: standard error from the repeats):\n\n| iterations "
               "| A s | B s | B/A time | se | A dB | B dB | B-A dB | se |\n| ---: | ---: | "
               "---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
             : "  matched iteration (se: standard error from the repeats):\n"
               "  %10s %11s %11s %9s %7s %9s %9s %8s %6s\n",
          "iterations", "A s", "B s", "B/A time", "se", "A dB", "B dB", "B-A dB", "se");
  size_t i;
  const json_t *r;
  json_array_foreach(json_object_get(cmp, "matched_iteration"), i, r) {
    char v[8][32];
    fmt(v[0], 32, sw_json_num(r, "a_train_s"), 3);
    fmt(v[1], 32, sw_json_num(r, "b_train_s"), 3);
    fmt(v[2], 32, sw_json_num(r, "time_ratio"), 4);
    fmt(v[3], 32, sw_json_num(r, "time_ratio_se"), 4);
    fmt(v[4], 32, sw_json_num(r, "a_psnr_db"), 3);
    fmt(v[5], 32, sw_json_num(r, "b_psnr_db"), 3);
    fmt(v[6], 32, sw_json_num(r, "psnr_diff"), 3);
    fmt(v[7], 32, sw_json_num(r, "psnr_diff_se"), 3);
    fprintf(out,
            md ? "| %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n"
               : "  %10.0f %11s %11s %9s %7s %9s %9s %8s %6s\n",
            sw_json_num(r, "iter"), v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  }
  if (json_array_size(json_object_get(cmp, "matched_iteration")) == 0)
    fprintf(out, "  (no iteration budget in common)\n");
  fprintf(out,
          md ? "\nMatched wallclock (the other's PSNR at this point's time):\n\n| at | "
               "iterations | train_s | psnr_db | other dB | other-this dB | note |\n| --- | "
               "---: | ---: | ---: | ---: | ---: | --- |\n"
             : "  matched wallclock (the other's PSNR at this point's time):\n"
               "  %2s %10s %11s %9s %9s %9s  %s\n",
          "at", "iterations", "train_s", "psnr_db", "other dB", "diff dB", "note");
  json_array_foreach(json_object_get(cmp, "matched_wallclock"), i, r) {
    char v[4][32];
    fmt(v[0], 32, sw_json_num(r, "train_s"), 3);
    fmt(v[1], 32, sw_json_num(r, "psnr_db"), 3);
    fmt(v[2], 32, sw_json_num(r, "other_psnr_db"), 3);
    fmt(v[3], 32, sw_json_num(r, "psnr_diff"), 3);
    const char *note = json_string_value(json_object_get(r, "note"));
    const char *at = strcmp(json_string_value(json_object_get(r, "at")), "a") ? "B" : "A";
    fprintf(out,
            md ? "| %s | %.0f | %s | %s | %s | %s | %s |\n" : "  %2s %10.0f %11s %9s %9s %9s  %s\n",
            at, sw_json_num(r, "iter"), v[0], v[1], v[2], v[3], note ? note : "");
  }
  fprintf(out,
          md ? "\nMatched PSNR (the other's time to reach this point's PSNR):\n\n| at | "
               "iterations | psnr_db | train_s | other s | other/this time | note |\n| --- "
               "| ---: | ---: | ---: | ---: | ---: | --- |\n"
             : "  matched PSNR (the other's time to reach this point's PSNR):\n"
               "  %2s %10s %9s %11s %11s %9s  %s\n",
          "at", "iterations", "psnr_db", "train_s", "other s", "ratio", "note");
  json_array_foreach(json_object_get(cmp, "matched_psnr"), i, r) {
    char v[4][32];
    fmt(v[0], 32, sw_json_num(r, "psnr_db"), 3);
    fmt(v[1], 32, sw_json_num(r, "train_s"), 3);
    fmt(v[2], 32, sw_json_num(r, "other_train_s"), 3);
    fmt(v[3], 32, sw_json_num(r, "time_ratio"), 4);
    const char *note = json_string_value(json_object_get(r, "note"));
    const char *at = strcmp(json_string_value(json_object_get(r, "at")), "a") ? "B" : "A";
    fprintf(out,
            md ? "| %s | %.0f | %s | %s | %s | %s | %s |\n"
               : "  %2s %10.0f %9s %11s %11s %9s  %s\n",
            at, sw_json_num(r, "iter"), v[0], v[1], v[2], v[3], note ? note : "");
  }
}

static void render_text(FILE *out, const json_t *root, int md) {
  const json_t *cfgs = json_object_get(root, "configurations");
  const json_t *front = json_object_get(root, "front");
  size_t npts = 0, i;
  const json_t *cj;
  json_array_foreach(cfgs, i, cj) npts += json_array_size(json_object_get(cj, "points"));
  fprintf(out,
          md ? "# Pareto data\n\n%zu configuration(s), %zu point(s), %zu on the front "
               "(lower train_s, higher psnr_db).\n"
             : "pareto: %zu configuration(s), %zu point(s), %zu on the front (lower "
               "train_s, higher psnr_db)\n",
          json_array_size(cfgs), npts, json_array_size(front));
  if (md && json_array_size(cfgs)) fprintf(out, "\n## Configurations\n");
  json_array_foreach(cfgs, i, cj) print_config(out, cj, md);
  if (json_array_size(front)) {
    fprintf(out, md ? "\n## Front\n\n| configuration | iterations | train_s | psnr_db |\n| --- | "
                      "---: | ---: | ---: |\n"
                    : "\nfront (time order):\n");
    const json_t *f;
    json_array_foreach(front, i, f)
        fprintf(out, md ? "| %s | %lld | %.3f | %.3f |\n" : "  %-40s %8lld it %11.3f s %9.3f dB\n",
                json_string_value(json_object_get(f, "config")),
                (long long)json_integer_value(json_object_get(f, "iter")),
                sw_json_num(f, "train_s"), sw_json_num(f, "psnr_db"));
  }
  const json_t *cmps = json_object_get(root, "comparisons");
  if (md && json_array_size(cmps)) fprintf(out, "\n## Comparisons\n");
  const json_t *cmp;
  json_array_foreach(cmps, i, cmp) print_comparison(out, cmp, md);
}

static void csv_field(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static void render_csv(FILE *out, const json_t *root) {
  fputs("config,sweep_id,kind,iterations,source,n,train_s_mean,train_s_sd,psnr_db_mean,"
        "psnr_db_sd,on_front\n",
        out);
  size_t i, j;
  const json_t *cj, *p;
  json_array_foreach(json_object_get(root, "configurations"), i, cj) {
    json_array_foreach(json_object_get(cj, "points"), j, p) {
      char v[4][32];
      fmt(v[0], 32, jstat(p, "train_s", "mean"), 6);
      fmt(v[1], 32, jstat(p, "train_s", "sd"), 6);
      fmt(v[2], 32, jstat(p, "psnr_db", "mean"), 6);
      fmt(v[3], 32, jstat(p, "psnr_db", "sd"), 6);
      for (int k = 0; k < 4; k++)
        if (!strcmp(v[k], "-")) v[k][0] = '\0';
      csv_field(out, json_string_value(json_object_get(cj, "id")));
      fprintf(out, ",%lld,%s,%lld,%s,%lld,%s,%s,%s,%s,%d\n",
              (long long)json_integer_value(json_object_get(cj, "sweep_id")),
              json_string_value(json_object_get(cj, "kind")),
              (long long)json_integer_value(json_object_get(p, "iter")),
              json_string_value(json_object_get(p, "source")),
              (long long)json_integer_value(json_object_get(p, "n")), v[0], v[1], v[2], v[3],
              json_is_true(json_object_get(p, "on_front")));
    }
  }
}

/* The page: the front chart (sw_charts.js: swCharts.pareto, the one drawing of a Pareto
 * front, shared with the grid reports), the points table and the comparisons. */
static int render_html(FILE *out, const json_t *root, struct sw_err *err) {
  sw_html_begin(out, "splatsweep pareto");
  fputs("<h1>Pareto data</h1>\n<div class=\"charts\" id=\"pareto-charts\"></div>\n", out);
  size_t i, j;
  const json_t *cj, *p;
  fputs("<h2>Points</h2>\n<table><tr><th class=\"l\">configuration</th><th>iterations</th>"
        "<th class=\"l\">source</th><th>n</th><th>train_s</th><th>sd</th><th>psnr_db</th>"
        "<th>sd</th><th>front</th></tr>\n",
        out);
  json_array_foreach(json_object_get(root, "configurations"), i, cj) {
    json_array_foreach(json_object_get(cj, "points"), j, p) {
      char v[4][32];
      fmt(v[0], 32, jstat(p, "train_s", "mean"), 3);
      fmt(v[1], 32, jstat(p, "train_s", "sd"), 3);
      fmt(v[2], 32, jstat(p, "psnr_db", "mean"), 3);
      fmt(v[3], 32, jstat(p, "psnr_db", "sd"), 3);
      fputs("<tr><td class=\"l\">", out);
      sw_html_escape(out, json_string_value(json_object_get(cj, "id")));
      fprintf(out,
              "</td><td>%lld</td><td class=\"l\">%s</td><td>%lld</td><td>%s</td><td>%s</td>"
              "<td>%s</td><td>%s</td><td>%s</td></tr>\n",
              (long long)json_integer_value(json_object_get(p, "iter")),
              json_string_value(json_object_get(p, "source")),
              (long long)json_integer_value(json_object_get(p, "n")), v[0], v[1], v[2], v[3],
              json_is_true(json_object_get(p, "on_front")) ? "&#9733;" : "");
    }
  }
  fputs("</table>\n", out);
  /* The comparisons as preformatted text: exact numbers, same layout as the terminal. */
  const json_t *cmps = json_object_get(root, "comparisons");
  if (json_array_size(cmps)) {
    char *txt = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&txt, &len);
    if (m) {
      const json_t *cmp;
      json_array_foreach(cmps, i, cmp) print_comparison(m, cmp, 0);
      fclose(m);
      fputs("<h2>Comparisons</h2>\n<pre>", out);
      sw_html_escape(out, txt);
      fputs("</pre>\n", out);
    }
    free(txt);
  }
  int rc = sw_html_data(out, "pareto-data", root, err);
  if (rc) return rc;
  sw_html_inline(out, "swCharts.pareto(JSON.parse(document.getElementById('pareto-data')."
                      "textContent),document.getElementById('pareto-charts'));");
  sw_html_end(out);
  return 0;
}

int sw_pareto_render(sw_store_t *store, const struct sw_pareto_opts *opts,
                     enum sw_pareto_format format, FILE *out, struct sw_err *err) {
  struct sw_err local = {0};
  if (!err) err = &local;
  json_t *root = sw_pareto_json(store, opts, err);
  if (!root) return err->code ? err->code : SW_EDB;
  int rc = 0;
  switch (format) {
  case SW_PARETO_TEXT: render_text(out, root, 0); break;
  case SW_PARETO_MD: render_text(out, root, 1); break;
  case SW_PARETO_CSV: render_csv(out, root); break;
  case SW_PARETO_HTML: rc = render_html(out, root, err); break;
  case SW_PARETO_JSON:
    if (json_dumpf(root, out, JSON_INDENT(2)) == 0)
      fputc('\n', out);
    else
      rc = sw_err_set(err, SW_EIO, "pareto: writing JSON failed");
    break;
  }
  json_decref(root);
  if (!rc && ferror(out)) rc = sw_err_set(err, SW_EIO, "pareto: write failed");
  return rc;
}

int sw_pareto_render_string(sw_store_t *store, const struct sw_pareto_opts *opts,
                            enum sw_pareto_format format, char **text_out, struct sw_err *err) {
  *text_out = NULL;
  size_t len = 0;
  FILE *m = open_memstream(text_out, &len);
  if (!m) return sw_err_set(err, SW_ENOMEM, "pareto: open_memstream failed");
  int rc = sw_pareto_render(store, opts, format, m, err);
  if (fclose(m) && !rc) rc = sw_err_set(err, SW_ENOMEM, "pareto: out of memory");
  if (rc) {
    free(*text_out);
    *text_out = NULL;
  }
  return rc;
}

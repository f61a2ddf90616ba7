/* gs_train_diag.c: densification lineage and per-step descriptions (see gs_train_diag.h). */
#include "gs_train_diag.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_scene.h"
#include "sw_log.h"

int gs_lineage_init(struct gs_lineage *l, uint32_t n, struct sw_err *err) {
  memset(l, 0, sizeof *l);
  uint32_t cap = n ? n : 1;
  l->born = calloc(cap, sizeof *l->born);
  l->picked = calloc(cap, sizeof *l->picked);
  l->last = calloc(cap, sizeof *l->last);
  if (!l->born || !l->picked || !l->last) {
    gs_lineage_free(l);
    return sw_err_set(err, SW_ENOMEM, "densify lineage for %u splats: out of memory", n);
  }
  l->n = n;
  l->cap = cap;
  return 0;
}

void gs_lineage_free(struct gs_lineage *l) {
  free(l->born);
  free(l->picked);
  free(l->last);
  memset(l, 0, sizeof *l);
}

int gs_lineage_apply(struct gs_lineage *l, const struct gs_densify_plan *plan, uint32_t iter,
                     struct sw_err *err) {
  uint32_t cap = plan->count ? plan->count : 1;
  uint32_t *born = malloc(cap * sizeof *born), *picked = malloc(cap * sizeof *picked),
           *last = malloc(cap * sizeof *last);
  if (!born || !picked || !last) {
    free(born);
    free(picked);
    free(last);
    return sw_err_set(err, SW_ENOMEM, "densify lineage for %u splats: out of memory", cap);
  }
  /* Sources of this step: a clone source survives as a KEEP and gets one more pick. */
  for (uint32_t k = 0; k < plan->count; k++) {
    uint32_t src = gs_plan_index(plan->src[k]), kind = gs_plan_kind(plan->src[k]);
    if (kind != GS_DENSIFY_KEEP && src < l->n) l->last[src] = iter;
  }
  for (uint32_t k = 0; k < plan->count; k++) {
    uint32_t src = gs_plan_index(plan->src[k]), kind = gs_plan_kind(plan->src[k]);
    if (src >= l->n) src = 0;
    if (kind == GS_DENSIFY_KEEP) {
      born[k] = l->born[src];
      picked[k] = l->picked[src] + (l->last[src] == iter);
      last[k] = l->last[src];
    } else {
      born[k] = iter;
      picked[k] = 0;
      last[k] = 0;
    }
  }
  gs_lineage_free(l);
  l->born = born;
  l->picked = picked;
  l->last = last;
  l->n = l->cap = plan->count;
  return 0;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Quantiles q[0..nq) of v[0..n) (sorted in place). */
static void quantiles(float *v, uint32_t n, const float *q, int nq, float *out) {
  if (!n) {
    for (int i = 0; i < nq; i++) out[i] = NAN;
    return;
  }
  qsort(v, n, sizeof *v, cmp_float);
  for (int i = 0; i < nq; i++) {
    uint32_t at = (uint32_t)(q[i] * (float)(n - 1) + 0.5f);
    out[i] = v[at < n ? at : n - 1];
  }
}

static float max_scale(const float *ls) {
  float x = ls[0] > ls[1] ? ls[0] : ls[1];
  return expf(x > ls[2] ? x : ls[2]);
}

/* One line for the splats idx[0..m) (all splats when idx is NULL, m = v->n). */
static void describe(const struct gs_densify_view *v, const char *what, const uint32_t *idx,
                     uint32_t m, const struct gs_lineage *l, uint32_t prev_grow, float *tmp,
                     const float lo[3], const float hi[3]) {
  const struct gs_densify_opts *o = v->opts;
  float q3[3] = {0.1f, 0.5f, 0.9f}, r[3];
  char line[1024];
  int at = snprintf(line, sizeof line, "densify-diag at %u: %s %u", v->iter, what, m);
#define FIG(label, expr)                                                                           \
  do {                                                                                             \
    for (uint32_t j = 0; j < m; j++) {                                                             \
      uint32_t i = idx ? idx[j] : j;                                                               \
      tmp[j] = (expr);                                                                             \
    }                                                                                              \
    quantiles(tmp, m, q3, 3, r);                                                                   \
    if (at > 0 && (size_t)at < sizeof line)                                                        \
      at += snprintf(line + at, sizeof line - (size_t)at, ", %s %.3g/%.3g/%.3g", label, r[0],      \
                     r[1], r[2]);                                                                  \
  } while (0)
  FIG("grad/thr", (v->dens[3 * (size_t)i + 1] > 0
                       ? v->dens[3 * (size_t)i] / v->dens[3 * (size_t)i + 1] / o->grad_threshold
                       : 0.0f));
  FIG("views", v->dens[3 * (size_t)i + 1]);
  FIG("opac", gs_sigmoid(v->opacity[i]));
  FIG("scale/pd", max_scale(v->log_scales + 3 * (size_t)i) / (o->percent_dense * o->extent));
  FIG("radius", v->dens[3 * (size_t)i + 2]);
  FIG("dist",
      sqrtf((v->means[3 * (size_t)i] - v->center[0]) * (v->means[3 * (size_t)i] - v->center[0]) +
            (v->means[3 * (size_t)i + 1] - v->center[1]) *
                (v->means[3 * (size_t)i + 1] - v->center[1]) +
            (v->means[3 * (size_t)i + 2] - v->center[2]) *
                (v->means[3 * (size_t)i + 2] - v->center[2])) /
          o->extent);
  if (l && l->n == v->n) {
    FIG("age", (float)(v->iter - l->born[i]));
    uint32_t again = 0, thrice = 0;
    for (uint32_t j = 0; j < m; j++) {
      uint32_t i = idx ? idx[j] : j;
      again += prev_grow && l->last[i] == prev_grow;
      thrice += l->picked[i] >= 3;
    }
    if (at > 0 && (size_t)at < sizeof line && m)
      at += snprintf(line + at, sizeof line - (size_t)at, ", again %.1f%%, picked>=3 %.1f%%",
                     100.0 * again / m, 100.0 * thrice / m);
  }
  /* The busiest cell of an 8^3 grid over the model's bounding box. */
  uint32_t cells[512] = {0}, best = 0;
  for (uint32_t j = 0; j < m; j++) {
    uint32_t i = idx ? idx[j] : j, c = 0;
    for (int a = 0; a < 3; a++) {
      float t = hi[a] > lo[a] ? (v->means[3 * (size_t)i + a] - lo[a]) / (hi[a] - lo[a]) : 0.0f;
      int b = (int)(t * 8.0f);
      c = c * 8 + (uint32_t)(b < 0 ? 0 : b > 7 ? 7 : b);
    }
    if (++cells[c] > cells[best]) best = c;
  }
  if (at > 0 && (size_t)at < sizeof line && m)
    snprintf(line + at, sizeof line - (size_t)at, ", cell %u,%u,%u holds %.1f%%", best / 64,
             best / 8 % 8, best % 8, 100.0 * cells[best] / m);
#undef FIG
  sw_log_debug("%s", line);
}

void gs_densify_describe(const struct gs_densify_view *v, const struct gs_densify_plan *plan,
                         const struct gs_lineage *l, uint32_t prev_grow) {
  size_t nn = v->n ? v->n : 1;
  float *tmp = malloc(nn * sizeof *tmp);
  uint32_t *cl = malloc(nn * sizeof *cl), *sp = malloc(nn * sizeof *sp);
  if (!tmp || !cl || !sp) goto out;
  uint32_t ncl = 0, nsp = 0;
  for (uint32_t k = 0; k < plan->count; k++) {
    uint32_t src = gs_plan_index(plan->src[k]), kind = gs_plan_kind(plan->src[k]);
    if (src >= v->n) continue;
    if (kind == GS_DENSIFY_CLONE) cl[ncl++] = src;
    /* A split source feeds two children: count it once. */
    if (kind == GS_DENSIFY_CHILD && (nsp == 0 || sp[nsp - 1] != src)) sp[nsp++] = src;
  }
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (uint32_t i = 0; i < v->n; i++)
    for (int a = 0; a < 3; a++) {
      float x = v->means[3 * (size_t)i + a];
      if (x < lo[a]) lo[a] = x;
      if (x > hi[a]) hi[a] = x;
    }
  describe(v, "cloned", cl, ncl, l, prev_grow, tmp, lo, hi);
  describe(v, "split", sp, nsp, l, prev_grow, tmp, lo, hi);
  describe(v, "all", NULL, v->n, l, prev_grow, tmp, lo, hi);
out:
  free(tmp);
  free(cl);
  free(sp);
}

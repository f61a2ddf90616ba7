/* gs_train_densify.c: the densification schedule, clone / split / prune decisions as a gather
 * plan, its application on the host, and the opacity reset on the host (see gs_train_densify.h);
 * the GPU applies the same plan with densify_gather.comp. */
#include "gs_train_densify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_scene.h"

void gs_densify_schedule(const struct gs_config *cfg, uint32_t iter, struct gs_densify_when *out) {
  int64_t i = iter;
  int last = i >= cfg->iterations;
  out->accumulate = i < cfg->densify_until;
  out->grow = !last && i > cfg->densify_from && i < cfg->densify_until &&
              iter % (uint32_t)cfg->densify_every == 0;
  out->reset = !last && cfg->opacity_reset_every > 0 && i < cfg->densify_until &&
               iter % (uint32_t)cfg->opacity_reset_every == 0 &&
               cfg->iterations - i >= cfg->opacity_reset_margin;
  /* The Inria code resets at densify_from on white backgrounds too, inside its densify_until
   * test as every reset (gsplat's strategy returns before any reset from refine_stop_iter on). */
  if (!last && cfg->white_reset && cfg->background == GS_BG_WHITE && i == cfg->densify_from &&
      i < cfg->densify_until)
    out->reset = 1;
  out->prune_big = i > cfg->prune_big_after;
}

int gs_moments_reserve(struct gs_moments *mo, uint32_t capacity, struct sw_err *err) {
  if (capacity <= mo->capacity) return 0;
  uint32_t cap = mo->capacity + mo->capacity / 2;
  if (cap < capacity) cap = capacity;
  for (int g = 0; g < GS_P_COUNT; g++) {
    size_t per = 2 * (size_t)gs_pgroup_floats[g];
    float *p = realloc(mo->g[g], per * cap * sizeof(float));
    if (!p) return sw_err_set(err, SW_ENOMEM, "Adam moments for %u splats: out of memory", cap);
    memset(p + per * mo->capacity, 0, per * (cap - mo->capacity) * sizeof(float));
    mo->g[g] = p;
  }
  mo->capacity = cap;
  return 0;
}

void gs_moments_free(struct gs_moments *mo) {
  for (int g = 0; g < GS_P_COUNT; g++) free(mo->g[g]);
  memset(mo, 0, sizeof *mo);
}

static float max_scale3(const float *s) {
  float x = s[0] > s[1] ? s[0] : s[1];
  return expf(x > s[2] ? x : s[2]);
}

static void quat_rot(const float *qr, float r[3][3]) {
  float n = sqrtf(qr[0] * qr[0] + qr[1] * qr[1] + qr[2] * qr[2] + qr[3] * qr[3]);
  float w = 1, x = 0, y = 0, z = 0;
  if (n > 0) {
    w = qr[0] / n;
    x = qr[1] / n;
    y = qr[2] / n;
    z = qr[3] / n;
  }
  r[0][0] = 1 - 2 * (y * y + z * z);
  r[0][1] = 2 * (x * y - w * z);
  r[0][2] = 2 * (x * z + w * y);
  r[1][0] = 2 * (x * y + w * z);
  r[1][1] = 1 - 2 * (x * x + z * z);
  r[1][2] = 2 * (y * z - w * x);
  r[2][0] = 2 * (x * z - w * y);
  r[2][1] = 2 * (y * z + w * x);
  r[2][2] = 1 - 2 * (x * x + y * y);
}

void gs_densify_plan_free(struct gs_densify_plan *p) {
  free(p->src);
  free(p->off);
  memset(p, 0, sizeof *p);
}

/* The opacity logit of each of two overlapping copies that together composite to the opacity
 * of logit l: a' = 1 - sqrt(1 - a), written a / (1 + sqrt(1 - a)) for small a. */
static float gs_shared_opacity(float l) {
  double a = 1.0 / (1.0 + exp(-(double)l));
  double s = a / (1.0 + sqrt(1.0 - a));
  if (!(s > 1e-12)) s = 1e-12;
  if (s > 1.0 - 1e-7) s = 1.0 - 1e-7;
  return (float)log(s / (1.0 - s));
}

/* Flags the plan's last entry as taking the opacity a clone and its parent share. */
static void plan_share_last(struct gs_densify_plan *p, float opacity_logit) {
  p->src[p->count - 1] |= GS_PLAN_OPACITY;
  p->off[3 * (size_t)(p->count - 1)] = gs_shared_opacity(opacity_logit);
}

static int plan_push(struct gs_densify_plan *p, uint32_t src, uint32_t kind, const float off[3]) {
  if (p->count == p->capacity) {
    uint32_t cap = p->capacity ? p->capacity * 2 : 1024;
    uint32_t *s2 = realloc(p->src, sizeof *s2 * cap);
    if (!s2) return -1;
    p->src = s2;
    float *o2 = realloc(p->off, sizeof *o2 * 3 * cap);
    if (!o2) return -1;
    p->off = o2;
    p->capacity = cap;
  }
  p->src[p->count] = src | kind << GS_PLAN_KIND_SHIFT;
  for (int a = 0; a < 3; a++) p->off[3 * (size_t)p->count + a] = off ? off[a] : 0.0f;
  p->count++;
  return 0;
}

int gs_densify_plan(uint32_t n0, const float *dens, const float *log_scales, const float *quats,
                    const float *opacity, const struct gs_densify_opts *o, struct gs_rng *rng,
                    struct gs_densify_plan *plan, struct gs_densify_report *rep,
                    struct sw_err *err) {
  struct gs_densify_report r = {.before = n0};
  plan->count = 0;
  if (n0 > GS_PLAN_INDEX_MASK)
    return sw_err_set(err, SW_EINVAL, "densify: %u splats is too many", n0);
  uint8_t *act = calloc(n0 ? n0 : 1, 1); /* 0 keep, 1 clone, 2 split */
  if (!act) return sw_err_set(err, SW_ENOMEM, "densify: out of memory for %u splats", n0);
  uint64_t budget = o->max_splats ? (o->max_splats > n0 ? o->max_splats - n0 : 0) : UINT64_MAX;
  uint64_t grow = 0; /* a clone adds one splat; a split replaces one by two */
  for (uint32_t i = 0; i < n0; i++) {
    float cnt = dens[3 * (size_t)i + 1];
    float avg = cnt > 0 ? dens[3 * (size_t)i] / cnt : 0.0f;
    if (!(avg > o->grad_threshold) || grow >= budget) continue; /* gsplat: strictly above */
    if (max_scale3(log_scales + 3 * (size_t)i) <= o->percent_dense * o->extent) {
      act[i] = 1;
      r.cloned++;
    } else {
      act[i] = 2;
      r.split++;
    }
    grow++;
  }
  /* Pruning applies to every splat of the step's result, new ones included (their screen
   * radius is unknown: 0). */
  float world = o->prune_world * o->extent;
  const float ln16 = logf(1.6f);
#define PRUNED(op, maxs, radius)                                                                   \
  (gs_sigmoid(op) < o->prune_opacity ||                                                            \
   (o->prune_big &&                                                                                \
    ((o->prune_screen > 0 && (radius) > o->prune_screen) || (world > 0 && (maxs) > world))))
  int rc = 0;
  for (uint32_t i = 0; i < n0 && !rc; i++) {
    if (act[i] == 2) continue;
    if (PRUNED(opacity[i], max_scale3(log_scales + 3 * (size_t)i), dens[3 * (size_t)i + 2])) {
      r.pruned++;
      if (act[i] == 1) act[i] = 3; /* a pruned parent: its clone keeps the whole opacity */
    } else if (plan_push(plan, i, GS_DENSIFY_KEEP, NULL)) {
      rc = -1;
    } else if (act[i] == 1 && o->share_opacity) {
      plan_share_last(plan, opacity[i]);
    }
  }
  /* Clones after the survivors, in their parents' order; a clone shares the opacity only with
   * a parent that survived (act 1), else it keeps it whole (act 3). */
  for (uint32_t i = 0; i < n0 && !rc; i++) {
    if (act[i] == 1 || act[i] == 3) {
      if (PRUNED(opacity[i], max_scale3(log_scales + 3 * (size_t)i), 0.0f)) {
        r.pruned++;
      } else if (plan_push(plan, i, GS_DENSIFY_CLONE, NULL)) {
        rc = -1;
      } else if (act[i] == 1 && o->share_opacity) {
        plan_share_last(plan, opacity[i]);
      }
    } else if (act[i] == 2) {
      float rot[3][3], sc[3], ls[3];
      quat_rot(quats + 4 * (size_t)i, rot);
      for (int a = 0; a < 3; a++) {
        sc[a] = expf(log_scales[3 * (size_t)i + a]);
        ls[a] = log_scales[3 * (size_t)i + a] - ln16;
      }
      for (int c = 0; c < 2 && !rc; c++) {
        float nrm[3], off[3];
        for (int a = 0; a < 3; a++) nrm[a] = gs_rng_normal(rng) * sc[a];
        for (int a = 0; a < 3; a++)
          off[a] = rot[a][0] * nrm[0] + rot[a][1] * nrm[1] + rot[a][2] * nrm[2];
        if (PRUNED(opacity[i], max_scale3(ls), 0.0f))
          r.pruned++;
        else if (plan_push(plan, i, GS_DENSIFY_CHILD, off))
          rc = -1;
      }
    }
  }
#undef PRUNED
  free(act);
  if (rc) return sw_err_set(err, SW_ENOMEM, "densify: out of memory for the plan");
  r.after = plan->count;
  if (rep) *rep = r;
  return 0;
}

int gs_densify(struct gs_model *m, struct gs_moments *mo, const float *dens,
               const struct gs_densify_opts *o, struct gs_rng *rng, struct gs_densify_report *rep,
               struct sw_err *err) {
  struct gs_densify_plan plan = {0};
  int rc =
      gs_densify_plan(m->count, dens, m->log_scales, m->quats, m->opacity, o, rng, &plan, rep, err);
  if (rc) return rc;
  /* Apply the gather into fresh arrays (a splat may feed several new ones). */
  struct gs_model *nm = NULL;
  struct gs_moments nmo = {0};
  rc = gs_model_new(plan.count ? plan.count : 1, &nm, err);
  if (!rc) rc = gs_moments_reserve(&nmo, nm->capacity, err);
  if (!rc) rc = gs_model_reserve(m, plan.count, err);
  if (!rc) rc = gs_moments_reserve(mo, m->capacity, err);
  if (rc) {
    gs_model_destroy(&nm);
    gs_moments_free(&nmo);
    gs_densify_plan_free(&plan);
    return rc;
  }
  const float ln16 = logf(1.6f);
  for (uint32_t k = 0; k < plan.count; k++) {
    uint32_t src = gs_plan_index(plan.src[k]), kind = gs_plan_kind(plan.src[k]);
    for (int g = 0; g < GS_P_COUNT; g++) {
      size_t per = gs_pgroup_floats[g];
      memcpy(gs_pgroup_host(nm, g) + per * k, gs_pgroup_host(m, g) + per * src,
             per * sizeof(float));
      if (kind == GS_DENSIFY_KEEP)
        memcpy(nmo.g[g] + 2 * per * k, mo->g[g] + 2 * per * src, 2 * per * sizeof(float));
      else
        memset(nmo.g[g] + 2 * per * k, 0, 2 * per * sizeof(float));
    }
    if (plan.src[k] & GS_PLAN_OPACITY) nm->opacity[k] = plan.off[3 * (size_t)k];
    if (kind == GS_DENSIFY_CHILD)
      for (int a = 0; a < 3; a++) {
        nm->means[3 * (size_t)k + a] += plan.off[3 * (size_t)k + a];
        nm->log_scales[3 * (size_t)k + a] -= ln16;
      }
  }
  for (int g = 0; g < GS_P_COUNT; g++) {
    size_t per = gs_pgroup_floats[g];
    memcpy(gs_pgroup_host(m, g), gs_pgroup_host(nm, g), per * plan.count * sizeof(float));
    memcpy(mo->g[g], nmo.g[g], 2 * per * plan.count * sizeof(float));
  }
  m->count = plan.count;
  gs_model_destroy(&nm);
  gs_moments_free(&nmo);
  gs_densify_plan_free(&plan);
  return 0;
}

void gs_densify_reset_opacity(struct gs_model *m, struct gs_moments *mo) {
  float cap = gs_logit(0.01f);
  for (uint32_t i = 0; i < m->count; i++)
    if (m->opacity[i] > cap) m->opacity[i] = cap;
  memset(mo->g[GS_P_OPACITY], 0, 2 * sizeof(float) * m->count);
}

/* gs_train_densify.c: clone / split / prune and the opacity reset on the host (see
 * gs_train_densify.h). The survivors are compacted in place first (so no splat is copied twice),
 * then the clones and split children are appended, then the prune pass compacts again. */
#include "gs_train_densify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static float *group(struct gs_model *m, int g) {
  switch (g) {
  case GS_P_MEANS: return m->means;
  case GS_P_SCALES: return m->log_scales;
  case GS_P_QUATS: return m->quats;
  case GS_P_OPACITY: return m->opacity;
  default: return m->sh;
  }
}

/* Copies splat `from` to slot `to` (parameters and moments, or zero moments). */
static void move_splat(struct gs_model *m, struct gs_moments *mo, uint32_t to, uint32_t from,
                       int zero_moments) {
  for (int g = 0; g < GS_P_COUNT; g++) {
    size_t per = gs_pgroup_floats[g];
    float *p = group(m, g);
    if (to != from) memmove(p + per * to, p + per * from, per * sizeof(float));
    float *mm = mo->g[g];
    if (zero_moments) memset(mm + 2 * per * to, 0, 2 * per * sizeof(float));
    else if (to != from) memmove(mm + 2 * per * to, mm + 2 * per * from, 2 * per * sizeof(float));
  }
}

static float max_scale(const struct gs_model *m, uint32_t i) {
  const float *s = m->log_scales + 3 * (size_t)i;
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

int gs_densify(struct gs_model *m, struct gs_moments *mo, const float *dens,
               const struct gs_densify_opts *o, struct gs_rng *rng,
               struct gs_densify_report *rep, struct sw_err *err) {
  uint32_t n0 = m->count;
  struct gs_densify_report r = {.before = n0};
  uint8_t *act = calloc(n0 ? n0 : 1, 1); /* 0 keep, 1 clone, 2 split */
  if (!act) return sw_err_set(err, SW_ENOMEM, "densify: out of memory for %u splats", n0);
  uint64_t budget = o->max_splats ? (o->max_splats > n0 ? o->max_splats - n0 : 0) : UINT64_MAX;
  uint64_t grow = 0; /* a clone adds one splat; a split replaces one by two */
  for (uint32_t i = 0; i < n0; i++) {
    float cnt = dens[3 * (size_t)i + 1];
    float avg = cnt > 0 ? dens[3 * (size_t)i] / cnt : 0.0f;
    if (!(avg >= o->grad_threshold) || grow >= budget) continue;
    if (max_scale(m, i) <= o->percent_dense * o->extent) {
      act[i] = 1;
      r.cloned++;
    } else {
      act[i] = 2;
      r.split++;
    }
    grow++;
  }
  uint32_t total = n0 + r.cloned + 2 * r.split;
  int rc = gs_model_reserve(m, total, err);
  if (!rc) rc = gs_moments_reserve(mo, m->capacity, err);
  if (rc) {
    free(act);
    return rc;
  }
  /* Phase 1: append clones and split children after the originals, which stay intact. */
  uint32_t t = n0;
  const float ln16 = logf(1.6f);
  for (uint32_t i = 0; i < n0; i++) {
    if (act[i] == 1) {
      move_splat(m, mo, t++, i, 1);
    } else if (act[i] == 2) {
      float rot[3][3], sc[3];
      quat_rot(m->quats + 4 * (size_t)i, rot);
      for (int a = 0; a < 3; a++) sc[a] = expf(m->log_scales[3 * (size_t)i + a]);
      for (int c = 0; c < 2; c++) {
        move_splat(m, mo, t, i, 1);
        float nrm[3];
        for (int a = 0; a < 3; a++) nrm[a] = gs_rng_normal(rng) * sc[a];
        for (int a = 0; a < 3; a++) {
          m->means[3 * (size_t)t + a] += rot[a][0] * nrm[0] + rot[a][1] * nrm[1] +
                                         rot[a][2] * nrm[2];
          m->log_scales[3 * (size_t)t + a] -= ln16;
        }
        t++;
      }
    }
  }
  m->count = total;
  /* Phase 2: drop split parents and pruned splats, compacting in place (order kept). */
  float world = o->prune_world * o->extent;
  uint32_t k = 0;
  for (uint32_t i = 0; i < total; i++) {
    if (i < n0 && act[i] == 2) continue;
    int prune = gs_sigmoid(m->opacity[i]) < o->prune_opacity;
    if (!prune && o->prune_big) {
      float radius = i < n0 ? dens[3 * (size_t)i + 2] : 0.0f;
      if (o->prune_screen > 0 && radius > o->prune_screen) prune = 1;
      if (world > 0 && max_scale(m, i) > world) prune = 1;
    }
    if (prune) {
      r.pruned++;
      continue;
    }
    move_splat(m, mo, k++, i, 0);
  }
  m->count = k;
  r.after = k;
  free(act);
  if (rep) *rep = r;
  return 0;
}

void gs_densify_reset_opacity(struct gs_model *m, struct gs_moments *mo) {
  float cap = gs_logit(0.01f);
  for (uint32_t i = 0; i < m->count; i++)
    if (m->opacity[i] > cap) m->opacity[i] = cap;
  memset(mo->g[GS_P_OPACITY], 0, 2 * sizeof(float) * m->count);
}

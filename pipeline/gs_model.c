/* gs_model.c: allocation, growth and random initialisation of the Gaussian model; the seeded
 * xoshiro256** generator; the cameras extent. */
#include "gs_model.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ---- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void gs_rng_seed(struct gs_rng *rng, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
}

uint64_t gs_rng_next(struct gs_rng *rng) {
  uint64_t *s = rng->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

float gs_rng_uniform(struct gs_rng *rng) {
  return (float)(gs_rng_next(rng) >> 40) * (1.0f / 16777216.0f);
}

double gs_rng_uniform_d(struct gs_rng *rng) {
  return (double)(gs_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

float gs_rng_normal(struct gs_rng *rng) {
  /* 1 - u lies in (0, 1], so the log is finite. */
  double u1 = 1.0 - gs_rng_uniform_d(rng);
  double u2 = gs_rng_uniform_d(rng);
  return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

uint32_t gs_rng_below(struct gs_rng *rng, uint32_t n) {
  if (n <= 1) return 0;
  /* Reject the top partial block of 2^32 so every residue is equally likely. */
  uint32_t limit = (uint32_t)(-n) % n;
  for (;;) {
    uint32_t r = (uint32_t)(gs_rng_next(rng) >> 32);
    if (r >= limit) return r % n;
  }
}

float gs_logit(float p) {
  if (p < 1e-6f) p = 1e-6f;
  if (p > 1.0f - 1e-6f) p = 1.0f - 1e-6f;
  return logf(p / (1.0f - p));
}

float gs_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* ---- memory ---- */

static const size_t per_splat[5] = {GS_MODEL_MEANS_PER, GS_MODEL_SCALES_PER, GS_MODEL_QUATS_PER, 1,
                                    GS_MODEL_SH_PER};

static float **array_slot(struct gs_model *m, int i) {
  switch (i) {
  case 0: return &m->means;
  case 1: return &m->log_scales;
  case 2: return &m->quats;
  case 3: return &m->opacity;
  default: return &m->sh;
  }
}

static const float *array_of(const struct gs_model *m, int i) {
  return *array_slot((struct gs_model *)m, i);
}

int gs_model_new(uint32_t capacity, struct gs_model **out, struct sw_err *err) {
  *out = NULL;
  if (capacity == 0) capacity = 1;
  struct gs_model *m = calloc(1, sizeof *m);
  if (!m) return sw_err_set(err, SW_ENOMEM, "gs_model: out of memory");
  for (int i = 0; i < 5; i++) {
    *array_slot(m, i) = calloc((size_t)capacity * per_splat[i], sizeof(float));
    if (!*array_slot(m, i)) {
      gs_model_destroy(&m);
      return sw_err_set(err, SW_ENOMEM, "gs_model: out of memory for %u splats", capacity);
    }
  }
  m->capacity = capacity;
  *out = m;
  return 0;
}

void gs_model_destroy(struct gs_model **model) {
  if (!model || !*model) return;
  for (int i = 0; i < 5; i++) free(*array_slot(*model, i));
  free(*model);
  *model = NULL;
}

int gs_model_reserve(struct gs_model *m, uint32_t capacity, struct sw_err *err) {
  if (capacity <= m->capacity) return 0;
  uint64_t grown = (uint64_t)m->capacity + m->capacity / 2;
  uint64_t cap = capacity > grown ? capacity : grown;
  if (cap > UINT32_MAX) cap = UINT32_MAX;
  float *fresh[5] = {0};
  for (int i = 0; i < 5; i++) {
    fresh[i] = calloc((size_t)cap * per_splat[i], sizeof(float));
    if (!fresh[i]) {
      for (int j = 0; j < i; j++) free(fresh[j]);
      return sw_err_set(err, SW_ENOMEM, "gs_model: out of memory growing to %llu splats",
                        (unsigned long long)cap);
    }
  }
  /* All allocations succeeded: only now is the model touched, so failure leaves it unchanged. */
  for (int i = 0; i < 5; i++) {
    float **slot = array_slot(m, i);
    memcpy(fresh[i], *slot, (size_t)m->count * per_splat[i] * sizeof(float));
    free(*slot);
    *slot = fresh[i];
  }
  m->capacity = (uint32_t)cap;
  return 0;
}

int gs_model_clone(const struct gs_model *src, struct gs_model **out, struct sw_err *err) {
  int rc = gs_model_new(src->count, out, err);
  if (rc) return rc;
  for (int i = 0; i < 5; i++)
    memcpy(*array_slot(*out, i), array_of(src, i),
           (size_t)src->count * per_splat[i] * sizeof(float));
  (*out)->count = src->count;
  return 0;
}

void gs_model_copy_splat(struct gs_model *dst, uint32_t to, const struct gs_model *src,
                         uint32_t from) {
  for (int i = 0; i < 5; i++)
    memcpy(*array_slot(dst, i) + (size_t)to * per_splat[i],
           array_of(src, i) + (size_t)from * per_splat[i], per_splat[i] * sizeof(float));
}

/* ---- initialisation ---- */

void gs_init_opts_default(struct gs_init_opts *o) {
  memset(o, 0, sizeof *o);
  o->count = 100000;
  for (int k = 0; k < 3; k++) {
    o->box_min[k] = -1.3f;
    o->box_max[k] = 1.3f;
    o->rgb[k] = 0.5f;
  }
  o->rgb_jitter = 0.5f;
  o->opacity = 0.1f;
  o->seed = 42;
}

/* A uniform grid over the points' bounding box with about 2 points per cell; the k nearest
 * neighbours of a point are searched in growing shells of cells until the shell is farther than
 * the current k-th distance. */
struct grid {
  float lo[3];
  float cell;
  int dim[3];
  uint32_t *start; /* dim^3 + 1 prefix offsets into idx */
  uint32_t *idx;
};

static int cell_coord(const struct grid *g, float x, int k) {
  int c = (int)floorf((x - g->lo[k]) / g->cell);
  if (c < 0) c = 0;
  if (c >= g->dim[k]) c = g->dim[k] - 1;
  return c;
}

static size_t cell_index(const struct grid *g, int x, int y, int z) {
  return ((size_t)z * g->dim[1] + y) * g->dim[0] + x;
}

static int grid_build(struct grid *g, const float *p, uint32_t n) {
  float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
  for (uint32_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      lo[k] = fminf(lo[k], p[3 * i + k]);
      hi[k] = fmaxf(hi[k], p[3 * i + k]);
    }
  double vol = 1.0;
  for (int k = 0; k < 3; k++) vol *= fmax(hi[k] - lo[k], 1e-6);
  float cell = (float)cbrt(vol * 2.0 / n);
  size_t cells = 1;
  for (int k = 0; k < 3; k++) {
    g->lo[k] = lo[k];
    double d = ceil(fmax(hi[k] - lo[k], 1e-6) / cell);
    g->dim[k] = d < 1 ? 1 : (d > 512 ? 512 : (int)d);
    cells *= (size_t)g->dim[k];
  }
  /* Cells are cubes; with a capped dimension a cell must cover the whole extent on that axis. */
  for (int k = 0; k < 3; k++) cell = fmaxf(cell, (hi[k] - lo[k]) / (float)g->dim[k] * 1.0001f);
  g->cell = cell > 0 ? cell : 1e-6f;
  g->start = calloc(cells + 1, sizeof(uint32_t));
  g->idx = malloc((size_t)n * sizeof(uint32_t));
  if (!g->start || !g->idx) return -1;
  uint32_t *cellof = malloc((size_t)n * sizeof(uint32_t));
  if (!cellof) return -1;
  for (uint32_t i = 0; i < n; i++) {
    size_t c = cell_index(g, cell_coord(g, p[3 * i], 0), cell_coord(g, p[3 * i + 1], 1),
                          cell_coord(g, p[3 * i + 2], 2));
    cellof[i] = (uint32_t)c;
    g->start[c + 1]++;
  }
  for (size_t c = 0; c < cells; c++) g->start[c + 1] += g->start[c];
  uint32_t *fill = malloc((cells + 1) * sizeof(uint32_t));
  if (!fill) {
    free(cellof);
    return -1;
  }
  memcpy(fill, g->start, (cells + 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) g->idx[fill[cellof[i]]++] = i;
  free(fill);
  free(cellof);
  return 0;
}

/* Mean squared distance from point i to its 3 nearest other points. */
static float knn3_mean_d2(const struct grid *g, const float *p, uint32_t n, uint32_t i) {
  float best[3] = {FLT_MAX, FLT_MAX, FLT_MAX};
  const float *q = p + 3 * (size_t)i;
  int c[3] = {cell_coord(g, q[0], 0), cell_coord(g, q[1], 1), cell_coord(g, q[2], 2)};
  int maxr = g->dim[0];
  if (g->dim[1] > maxr) maxr = g->dim[1];
  if (g->dim[2] > maxr) maxr = g->dim[2];
  for (int r = 0; r <= maxr; r++) {
    /* Every point in a cell at Chebyshev ring r is at least (r - 1) cells away. */
    if (r > 0) {
      float reach = (float)(r - 1) * g->cell;
      if (best[2] < FLT_MAX && reach * reach > best[2]) break;
    }
    for (int z = c[2] - r; z <= c[2] + r; z++) {
      if (z < 0 || z >= g->dim[2]) continue;
      for (int y = c[1] - r; y <= c[1] + r; y++) {
        if (y < 0 || y >= g->dim[1]) continue;
        for (int x = c[0] - r; x <= c[0] + r; x++) {
          if (x < 0 || x >= g->dim[0]) continue;
          if (abs(x - c[0]) != r && abs(y - c[1]) != r && abs(z - c[2]) != r) continue;
          size_t ci = cell_index(g, x, y, z);
          for (uint32_t s = g->start[ci]; s < g->start[ci + 1]; s++) {
            uint32_t j = g->idx[s];
            if (j == i) continue;
            const float *o = p + 3 * (size_t)j;
            float dx = o[0] - q[0], dy = o[1] - q[1], dz = o[2] - q[2];
            float d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < best[2]) {
              if (d2 < best[1]) {
                best[2] = best[1];
                if (d2 < best[0]) {
                  best[1] = best[0];
                  best[0] = d2;
                } else {
                  best[1] = d2;
                }
              } else {
                best[2] = d2;
              }
            }
          }
        }
      }
    }
  }
  int have = 0;
  float sum = 0;
  for (int k = 0; k < 3; k++)
    if (best[k] < FLT_MAX) {
      sum += best[k];
      have++;
    }
  (void)n;
  return have ? sum / (float)have : 1.0f;
}

int gs_model_init_scales_knn(struct gs_model *m, struct sw_err *err) {
  uint32_t n = m->count;
  if (n == 0) return 0;
  if (n == 1) {
    for (int k = 0; k < 3; k++) m->log_scales[k] = 0.0f;
    return 0;
  }
  struct grid g = {0};
  if (grid_build(&g, m->means, n)) {
    free(g.start);
    free(g.idx);
    return sw_err_set(err, SW_ENOMEM, "gs_model: out of memory building the neighbour grid");
  }
  for (uint32_t i = 0; i < n; i++) {
    float d2 = knn3_mean_d2(&g, m->means, n, i);
    if (d2 < 1e-7f) d2 = 1e-7f;
    float s = logf(sqrtf(d2));
    for (int k = 0; k < 3; k++) m->log_scales[3 * (size_t)i + k] = s;
  }
  free(g.start);
  free(g.idx);
  return 0;
}

int gs_model_init_random(struct gs_model *m, const struct gs_init_opts *o, struct sw_err *err) {
  for (int k = 0; k < 3; k++)
    if (!(o->box_max[k] >= o->box_min[k]) || !isfinite(o->box_min[k]) || !isfinite(o->box_max[k]))
      return sw_err_set(err, SW_EINVAL, "gs_model: init box axis %d is empty or not finite", k);
  int rc = gs_model_reserve(m, o->count, err);
  if (rc) return rc;
  struct gs_rng rng;
  gs_rng_seed(&rng, o->seed);
  float opacity = o->opacity > 0 ? o->opacity : 0.1f;
  float logit = gs_logit(opacity);
  m->count = o->count;
  for (uint32_t i = 0; i < o->count; i++) {
    for (int k = 0; k < 3; k++)
      m->means[3 * (size_t)i + k] =
          o->box_min[k] + (o->box_max[k] - o->box_min[k]) * gs_rng_uniform(&rng);
    float *sh = m->sh + (size_t)i * GS_MODEL_SH_PER;
    memset(sh, 0, GS_MODEL_SH_PER * sizeof(float));
    for (int k = 0; k < 3; k++) {
      float c = o->rgb[k] + o->rgb_jitter * (2.0f * gs_rng_uniform(&rng) - 1.0f);
      sh[k] = (c - 0.5f) / GS_SH_C0;
    }
    float *q = m->quats + 4 * (size_t)i;
    q[0] = 1.0f;
    q[1] = q[2] = q[3] = 0.0f;
    m->opacity[i] = logit;
  }
  return gs_model_init_scales_knn(m, err);
}

float gs_cameras_extent(const struct gs_camera *cams, uint32_t n, float center_out[3]) {
  double c[3] = {0, 0, 0};
  for (uint32_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) c[k] += cams[i].campos[k];
  for (int k = 0; k < 3; k++) c[k] = n ? c[k] / n : 0.0;
  double r = 0;
  for (uint32_t i = 0; i < n; i++) {
    double d2 = 0;
    for (int k = 0; k < 3; k++) d2 += (cams[i].campos[k] - c[k]) * (cams[i].campos[k] - c[k]);
    if (d2 > r) r = d2;
  }
  if (center_out)
    for (int k = 0; k < 3; k++) center_out[k] = (float)c[k];
  return (float)(1.1 * sqrt(r));
}

int gs_model_init_points(struct gs_model *m, const float *points, const uint8_t *colors, uint32_t n,
                         float opacity, struct sw_err *err) {
  if (n == 0) return sw_err_set(err, SW_EINVAL, "gs_model: the point cloud is empty");
  int rc = gs_model_reserve(m, n, err);
  if (rc) return rc;
  float logit = gs_logit(opacity > 0 ? opacity : 0.1f);
  m->count = n;
  for (uint32_t i = 0; i < n; i++) {
    memcpy(m->means + 3 * (size_t)i, points + 3 * (size_t)i, 3 * sizeof(float));
    float *sh = m->sh + (size_t)i * GS_MODEL_SH_PER;
    memset(sh, 0, GS_MODEL_SH_PER * sizeof(float));
    for (int k = 0; k < 3; k++)
      sh[k] = ((float)colors[3 * (size_t)i + k] / 255.0f - 0.5f) / GS_SH_C0;
    float *q = m->quats + 4 * (size_t)i;
    q[0] = 1.0f;
    q[1] = q[2] = q[3] = 0.0f;
    m->opacity[i] = logit;
  }
  return gs_model_init_scales_knn(m, err);
}

/* gs_gen.c: the analytic scene generator (see gs_gen.h). A scene is a list of primitives (axis-
 * aligned boxes, vertical cylinders, spheres, tori) with procedural materials, held in a small
 * bounding-volume hierarchy; every pixel is ray-traced with diffuse + ambient shading and a hard
 * shadow from one directional light. Pixels whose centre ray hits a different primitive than a
 * neighbour's are supersampled 2x2, so edges and alpha are anti-aliased at little cost. */
#include "gs_gen.h"
#include "gs_gen_int.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_model.h"
#include "gs_png.h"
#include "gs_scene.h"
#include "sw_fs.h"

#define CAM_RADIUS 4.5f
#define EPS 1e-4f

enum prim_kind { P_BOX, P_CYL, P_SPHERE, P_TORUS };
enum tex_kind { T_NOISE, T_CHECKER, T_STRIPES, T_RINGS };

struct material {
  float a[3], b[3]; /* base colour and second colour of two-colour textures */
  int tex;
  float freq; /* texture frequency (per world unit, or per revolution for angular ones) */
};

struct prim {
  int kind;
  float p[6]; /* box: min xyz, max xyz; cyl: cx cy r z0 z1; sphere: c xyz r; torus: c xyz R r */
  float lo[3], hi[3];
  int mat;
};

struct bvh_node {
  float lo[3], hi[3];
  int left, right; /* children; leaf when left < 0: prims [first, first + count) */
  int first, count;
};

struct scene {
  struct prim *prims;
  int n, cap;
  struct material mats[16];
  int nmats;
  int *order; /* primitive indices in BVH leaf order */
  struct bvh_node *nodes;
  int nnodes;
  float light[3];
};

struct hit {
  float t;
  float n[3];
  int prim;
};

static const char *kind_names[] = {"bricks", "shapes"};

int gs_gen_kind_parse(const char *name, enum gs_gen_kind *kind, struct sw_err *err) {
  for (int i = 0; i < 2; i++)
    if (name && !strcmp(name, kind_names[i])) {
      *kind = (enum gs_gen_kind)i;
      return 0;
    }
  return sw_err_set(err, SW_EINVAL, "unknown scene kind '%s' (kinds: bricks, shapes)",
                    name ? name : "");
}

const char *gs_gen_kind_name(enum gs_gen_kind kind) {
  return (unsigned)kind < 2 ? kind_names[kind] : "unknown";
}

/* ---- small vector helpers ---- */

static float dot3(const float *a, const float *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void norm3(float *v) {
  float l = sqrtf(dot3(v, v));
  if (l > 0) {
    v[0] /= l;
    v[1] /= l;
    v[2] /= l;
  }
}

static void cross3(const float *a, const float *b, float *o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

/* ---- scene building ---- */

static int add_prim(struct scene *s, int kind, const float *p, int mat) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    struct prim *np = realloc(s->prims, (size_t)cap * sizeof *np);
    if (!np) return -1;
    s->prims = np;
    s->cap = cap;
  }
  struct prim *q = &s->prims[s->n++];
  memset(q, 0, sizeof *q);
  q->kind = kind;
  q->mat = mat;
  memcpy(q->p, p, sizeof q->p);
  switch (kind) {
  case P_BOX:
    for (int k = 0; k < 3; k++) {
      q->lo[k] = p[k];
      q->hi[k] = p[3 + k];
    }
    break;
  case P_CYL:
    q->lo[0] = p[0] - p[2], q->hi[0] = p[0] + p[2];
    q->lo[1] = p[1] - p[2], q->hi[1] = p[1] + p[2];
    q->lo[2] = p[3], q->hi[2] = p[4];
    break;
  case P_SPHERE:
    for (int k = 0; k < 3; k++) {
      q->lo[k] = p[k] - p[3];
      q->hi[k] = p[k] + p[3];
    }
    break;
  default: /* torus around the z axis */
    for (int k = 0; k < 2; k++) {
      q->lo[k] = p[k] - p[3] - p[4];
      q->hi[k] = p[k] + p[3] + p[4];
    }
    q->lo[2] = p[2] - p[4];
    q->hi[2] = p[2] + p[4];
    break;
  }
  return 0;
}

static int add_mat(struct scene *s, const float *a, const float *b, int tex, float freq) {
  struct material *m = &s->mats[s->nmats];
  memcpy(m->a, a, sizeof m->a);
  memcpy(m->b, b ? b : a, sizeof m->b);
  m->tex = tex;
  m->freq = freq;
  return s->nmats++;
}

/* Lego-like: a studded base plate and bricks of several sizes and colours stacked on a height map
 * of stud cells, each brick with its studs (cylinders) on top. */
static int build_bricks(struct scene *s, struct gs_rng *rng) {
  static const float colours[7][3] = {
      {0.72f, 0.08f, 0.06f}, {0.96f, 0.76f, 0.05f}, {0.05f, 0.32f, 0.70f}, {0.12f, 0.55f, 0.22f},
      {0.92f, 0.92f, 0.89f}, {0.22f, 0.22f, 0.25f}, {0.95f, 0.45f, 0.06f}};
  static const int sizes[6][2] = {{2, 4}, {2, 2}, {1, 4}, {1, 2}, {2, 3}, {1, 6}};
  const float pitch = 0.2f, brick_h = 0.24f, stud_r = 0.06f, stud_h = 0.045f, gap = 0.004f;
  const int grid = 10;
  const float x0 = -1.0f, plate_z0 = -0.66f, plate_z1 = -0.58f;
  int plate_mat = add_mat(s, (const float[3]){0.45f, 0.47f, 0.50f}, NULL, T_NOISE, 18.0f);
  int brick_mat[7];
  for (int c = 0; c < 7; c++) brick_mat[c] = add_mat(s, colours[c], NULL, T_NOISE, 24.0f);
  float plate[6] = {x0, x0, plate_z0, x0 + grid * pitch, x0 + grid * pitch, plate_z1};
  if (add_prim(s, P_BOX, plate, plate_mat)) return -1;
  int height[10][10] = {{0}};
  int placed = 0;
  for (int attempt = 0; attempt < 200 && placed < 16; attempt++) {
    const int *sz = sizes[gs_rng_below(rng, 6)];
    int w = sz[0], d = sz[1];
    if (gs_rng_below(rng, 2)) {
      int t = w;
      w = d;
      d = t;
    }
    /* Positions favour the middle of the plate, so bricks pile up into a structure. */
    int span_x = grid - w + 1, span_y = grid - d + 1;
    int i0 = (int)gs_rng_below(rng, (uint32_t)span_x),
        j0 = (int)gs_rng_below(rng, (uint32_t)span_y);
    if (gs_rng_uniform(rng) < 0.6f) {
      i0 = (i0 + span_x / 2) / 2 + span_x / 4;
      j0 = (j0 + span_y / 2) / 2 + span_y / 4;
      if (i0 > span_x - 1) i0 = span_x - 1;
      if (j0 > span_y - 1) j0 = span_y - 1;
    }
    int level = 0;
    for (int i = i0; i < i0 + w; i++)
      for (int j = j0; j < j0 + d; j++)
        if (height[i][j] > level) level = height[i][j];
    if (level >= 5) continue;
    for (int i = i0; i < i0 + w; i++)
      for (int j = j0; j < j0 + d; j++) height[i][j] = level + 1;
    int mat = brick_mat[gs_rng_below(rng, 7)];
    float z0 = plate_z1 + level * brick_h;
    float box[6] = {x0 + i0 * pitch + gap,       x0 + j0 * pitch + gap,       z0,
                    x0 + (i0 + w) * pitch - gap, x0 + (j0 + d) * pitch - gap, z0 + brick_h};
    if (add_prim(s, P_BOX, box, mat)) return -1;
    for (int i = i0; i < i0 + w; i++)
      for (int j = j0; j < j0 + d; j++) {
        float cyl[6] = {x0 + (i + 0.5f) * pitch,
                        x0 + (j + 0.5f) * pitch,
                        stud_r,
                        z0 + brick_h,
                        z0 + brick_h + stud_h,
                        0};
        if (add_prim(s, P_CYL, cyl, mat)) return -1;
      }
    placed++;
  }
  /* Studs of the plate where no brick stands. */
  for (int i = 0; i < grid; i++)
    for (int j = 0; j < grid; j++)
      if (height[i][j] == 0) {
        float cyl[6] = {x0 + (i + 0.5f) * pitch,
                        x0 + (j + 0.5f) * pitch,
                        stud_r,
                        plate_z1,
                        plate_z1 + stud_h,
                        0};
        if (add_prim(s, P_CYL, cyl, plate_mat)) return -1;
      }
  return 0;
}

/* Spheres, boxes, a torus and cylinders with checker and stripe textures on a checkered
 * platform, placed in distinct cells of a 3x3 layout. */
static int build_shapes(struct scene *s, struct gs_rng *rng) {
  static const float pal[8][3] = {
      {0.85f, 0.20f, 0.15f}, {0.95f, 0.85f, 0.20f}, {0.15f, 0.40f, 0.85f}, {0.20f, 0.70f, 0.30f},
      {0.95f, 0.95f, 0.95f}, {0.10f, 0.10f, 0.12f}, {0.60f, 0.25f, 0.70f}, {0.95f, 0.55f, 0.15f}};
  const float base_z = -0.55f;
  int floor_mat = add_mat(s, (const float[3]){0.80f, 0.80f, 0.78f},
                          (const float[3]){0.30f, 0.32f, 0.36f}, T_CHECKER, 2.5f);
  float base[6] = {-1.15f, -1.15f, base_z - 0.08f, 1.15f, 1.15f, base_z};
  if (add_prim(s, P_BOX, base, floor_mat)) return -1;
  int cells[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  for (int i = 8; i > 0; i--) { /* Fisher-Yates */
    int j = (int)gs_rng_below(rng, (uint32_t)i + 1), t = cells[i];
    cells[i] = cells[j];
    cells[j] = t;
  }
  /* Seven objects: 2 spheres, 2 boxes, 1 torus, 2 cylinders. */
  static const int kinds[7] = {P_SPHERE, P_SPHERE, P_BOX, P_BOX, P_TORUS, P_CYL, P_CYL};
  for (int o = 0; o < 7; o++) {
    float cx = -0.7f + 0.7f * (float)(cells[o] % 3) + 0.12f * (gs_rng_uniform(rng) - 0.5f);
    float cy = -0.7f + 0.7f * (float)(cells[o] / 3) + 0.12f * (gs_rng_uniform(rng) - 0.5f);
    int ca = (int)gs_rng_below(rng, 8), cb = (ca + 1 + (int)gs_rng_below(rng, 7)) % 8;
    int tex = kinds[o] == P_SPHERE ? T_CHECKER : kinds[o] == P_TORUS ? T_RINGS : T_STRIPES;
    if (kinds[o] == P_BOX && o == 3) tex = T_CHECKER;
    float freq =
        tex == T_CHECKER ? 8.0f + 4.0f * gs_rng_uniform(rng) : 10.0f + 8.0f * gs_rng_uniform(rng);
    int mat = add_mat(s, pal[ca], pal[cb], tex, freq);
    float size = 0.22f + 0.08f * gs_rng_uniform(rng);
    float p[6] = {0};
    switch (kinds[o]) {
    case P_SPHERE: p[0] = cx, p[1] = cy, p[2] = base_z + size, p[3] = size; break;
    case P_BOX: {
      float hz = size * (1.0f + gs_rng_uniform(rng));
      p[0] = cx - size, p[1] = cy - size, p[2] = base_z;
      p[3] = cx + size, p[4] = cy + size, p[5] = base_z + 2 * hz;
      break;
    }
    case P_TORUS: p[0] = cx, p[1] = cy, p[2] = base_z + 0.09f, p[3] = size, p[4] = 0.09f; break;
    default:
      p[0] = cx, p[1] = cy, p[2] = size * 0.8f, p[3] = base_z,
      p[4] = base_z + 0.5f + 0.6f * gs_rng_uniform(rng);
      break;
    }
    if (add_prim(s, kinds[o], p, mat)) return -1;
  }
  return 0;
}

/* ---- BVH: median split on the longest axis of the centroid bounds ---- */

static float centroid(const struct prim *p, int k) { return 0.5f * (p->lo[k] + p->hi[k]); }

static int bvh_build(struct scene *s, int first, int count) {
  int id = s->nnodes++;
  struct bvh_node *nd = &s->nodes[id];
  float clo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, chi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
  for (int k = 0; k < 3; k++) {
    nd->lo[k] = FLT_MAX;
    nd->hi[k] = -FLT_MAX;
  }
  for (int i = first; i < first + count; i++) {
    const struct prim *p = &s->prims[s->order[i]];
    for (int k = 0; k < 3; k++) {
      nd->lo[k] = fminf(nd->lo[k], p->lo[k]);
      nd->hi[k] = fmaxf(nd->hi[k], p->hi[k]);
      clo[k] = fminf(clo[k], centroid(p, k));
      chi[k] = fmaxf(chi[k], centroid(p, k));
    }
  }
  if (count <= 4) {
    nd->left = nd->right = -1;
    nd->first = first;
    nd->count = count;
    return id;
  }
  int axis = 0;
  for (int k = 1; k < 3; k++)
    if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
  /* Partial selection sort is fine at these sizes (a few hundred primitives). */
  int mid = first + count / 2;
  for (int i = first; i <= mid; i++) {
    int best = i;
    for (int j = i + 1; j < first + count; j++)
      if (centroid(&s->prims[s->order[j]], axis) < centroid(&s->prims[s->order[best]], axis))
        best = j;
    int t = s->order[i];
    s->order[i] = s->order[best];
    s->order[best] = t;
  }
  int l = bvh_build(s, first, mid - first);
  int r = bvh_build(s, mid, first + count - mid);
  nd = &s->nodes[id];
  nd->left = l;
  nd->right = r;
  nd->count = 0;
  return id;
}

/* ---- intersection ---- */

static int slab(const float *lo, const float *hi, const float *o, const float *inv, float tmax,
                float *t0_out, float *t1_out) {
  float t0 = 0.0f, t1 = tmax;
  for (int k = 0; k < 3; k++) {
    float a = (lo[k] - o[k]) * inv[k], b = (hi[k] - o[k]) * inv[k];
    if (a > b) {
      float t = a;
      a = b;
      b = t;
    }
    t0 = a > t0 ? a : t0;
    t1 = b < t1 ? b : t1;
    if (t0 > t1) return 0;
  }
  *t0_out = t0;
  *t1_out = t1;
  return 1;
}

static float torus_sdf(const float *c, float R, float r, const float *p) {
  float x = p[0] - c[0], y = p[1] - c[1], z = p[2] - c[2];
  float q = sqrtf(x * x + y * y) - R;
  return sqrtf(q * q + z * z) - r;
}

/* Nearest hit of one primitive in (EPS, tmax); writes t and the outward normal. */
static int hit_prim(const struct prim *p, const float *o, const float *d, const float *inv,
                    float tmax, float *t_out, float *n) {
  switch (p->kind) {
  case P_BOX: {
    float t0, t1;
    if (!slab(p->lo, p->hi, o, inv, tmax, &t0, &t1)) return 0;
    float t = t0 > EPS ? t0 : t1;
    if (t <= EPS || t >= tmax) return 0;
    float pt[3] = {o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]};
    /* The face whose plane is nearest to the hit point gives the normal. */
    int best = 0;
    float bd = FLT_MAX, sign = 1;
    for (int k = 0; k < 3; k++) {
      float dl = fabsf(pt[k] - p->lo[k]), dh = fabsf(pt[k] - p->hi[k]);
      if (dl < bd) bd = dl, best = k, sign = -1;
      if (dh < bd) bd = dh, best = k, sign = 1;
    }
    n[0] = n[1] = n[2] = 0;
    n[best] = sign;
    *t_out = t;
    return 1;
  }
  case P_CYL: {
    float cx = p->p[0], cy = p->p[1], r = p->p[2], z0 = p->p[3], z1 = p->p[4];
    float best = tmax;
    int found = 0;
    float ox = o[0] - cx, oy = o[1] - cy;
    float a = d[0] * d[0] + d[1] * d[1];
    if (a > 1e-12f) {
      float b = ox * d[0] + oy * d[1], c = ox * ox + oy * oy - r * r;
      float disc = b * b - a * c;
      if (disc >= 0) {
        float sq = sqrtf(disc);
        for (int s = -1; s <= 1; s += 2) {
          float t = (-b + s * sq) / a;
          float z = o[2] + t * d[2];
          if (t > EPS && t < best && z >= z0 && z <= z1) {
            best = t;
            n[0] = (ox + t * d[0]) / r;
            n[1] = (oy + t * d[1]) / r;
            n[2] = 0;
            found = 1;
            break;
          }
        }
      }
    }
    if (fabsf(d[2]) > 1e-12f)
      for (int cap = 0; cap < 2; cap++) {
        float zc = cap ? z1 : z0;
        float t = (zc - o[2]) / d[2];
        float x = ox + t * d[0], y = oy + t * d[1];
        if (t > EPS && t < best && x * x + y * y <= r * r) {
          best = t;
          n[0] = n[1] = 0;
          n[2] = cap ? 1.0f : -1.0f;
          found = 1;
        }
      }
    if (found) *t_out = best;
    return found;
  }
  case P_SPHERE: {
    float oc[3] = {o[0] - p->p[0], o[1] - p->p[1], o[2] - p->p[2]};
    float b = dot3(oc, d), c = dot3(oc, oc) - p->p[3] * p->p[3];
    float disc = b * b - c;
    if (disc < 0) return 0;
    float sq = sqrtf(disc);
    float t = -b - sq;
    if (t <= EPS) t = -b + sq;
    if (t <= EPS || t >= tmax) return 0;
    for (int k = 0; k < 3; k++) n[k] = (oc[k] + t * d[k]) / p->p[3];
    *t_out = t;
    return 1;
  }
  default: { /* torus: sphere tracing of its distance function inside the bounding box */
    float t0, t1;
    if (!slab(p->lo, p->hi, o, inv, tmax, &t0, &t1)) return 0;
    float t = t0 > EPS ? t0 : EPS;
    for (int it = 0; it < 256 && t <= t1; it++) {
      float q[3] = {o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]};
      float dist = torus_sdf(p->p, p->p[3], p->p[4], q);
      if (dist < 1e-5f) {
        float x = q[0] - p->p[0], y = q[1] - p->p[1];
        float l = sqrtf(x * x + y * y);
        float k = l > 0 ? p->p[3] / l : 0;
        n[0] = x - x * k;
        n[1] = y - y * k;
        n[2] = q[2] - p->p[2];
        norm3(n);
        *t_out = t;
        return t < tmax;
      }
      t += dist;
    }
    return 0;
  }
  }
}

/* Nearest hit in the scene (any_hit: stop at the first, for shadow rays). */
static int trace(const struct scene *s, const float *o, const float *d, int any_hit,
                 struct hit *h) {
  float inv[3];
  for (int k = 0; k < 3; k++) inv[k] = 1.0f / (fabsf(d[k]) > 1e-20f ? d[k] : 1e-20f);
  int stack[64], sp = 0;
  stack[sp++] = 0;
  h->t = FLT_MAX;
  h->prim = -1;
  while (sp) {
    const struct bvh_node *nd = &s->nodes[stack[--sp]];
    float t0, t1;
    if (!slab(nd->lo, nd->hi, o, inv, h->t, &t0, &t1)) continue;
    if (nd->left < 0) {
      for (int i = nd->first; i < nd->first + nd->count; i++) {
        float t, n[3];
        if (hit_prim(&s->prims[s->order[i]], o, d, inv, h->t, &t, n)) {
          h->t = t;
          memcpy(h->n, n, sizeof n);
          h->prim = s->order[i];
          if (any_hit) return 1;
        }
      }
    } else if (sp + 2 <= 64) {
      stack[sp++] = nd->left;
      stack[sp++] = nd->right;
    }
  }
  return h->prim >= 0;
}

/* ---- shading ---- */

static uint32_t hash3(int x, int y, int z) {
  uint32_t h = (uint32_t)x * 0x8da6b343u ^ (uint32_t)y * 0xd8163841u ^ (uint32_t)z * 0xcb1ab31fu;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  return h;
}

/* Trilinear value noise in [0, 1]. */
static float value_noise(const float *p, float freq) {
  float x = p[0] * freq, y = p[1] * freq, z = p[2] * freq;
  int xi = (int)floorf(x), yi = (int)floorf(y), zi = (int)floorf(z);
  float fx = x - xi, fy = y - yi, fz = z - zi;
  fx = fx * fx * (3 - 2 * fx), fy = fy * fy * (3 - 2 * fy), fz = fz * fz * (3 - 2 * fz);
  float acc = 0;
  for (int c = 0; c < 8; c++) {
    int dx = c & 1, dy = (c >> 1) & 1, dz = c >> 2;
    float w = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * (dz ? fz : 1 - fz);
    acc += w * (float)(hash3(xi + dx, yi + dy, zi + dz) & 0xffff) / 65535.0f;
  }
  return acc;
}

static void albedo(const struct scene *s, const struct prim *pr, const float *pt, float *out) {
  const struct material *m = &s->mats[pr->mat];
  float mix = 0;
  switch (m->tex) {
  case T_NOISE: { /* plastic with subtle mottling: two octaves, +-8% brightness */
    float v = 0.65f * value_noise(pt, m->freq) + 0.35f * value_noise(pt, 3.1f * m->freq);
    float g = 0.92f + 0.16f * v;
    for (int k = 0; k < 3; k++) out[k] = fminf(1.0f, m->a[k] * g);
    return;
  }
  case T_CHECKER:
    if (pr->kind == P_SPHERE) { /* checker in longitude / latitude */
      float x = pt[0] - pr->p[0], y = pt[1] - pr->p[1], z = pt[2] - pr->p[2];
      float lon = atan2f(y, x) / (float)M_PI, lat = asinf(fmaxf(-1, fminf(1, z / pr->p[3])));
      mix = (float)(((int)floorf(lon * m->freq * 0.5f) + (int)floorf(lat / (float)M_PI * m->freq)) &
                    1);
    } else {
      mix = (float)(((int)floorf(pt[0] * m->freq) + (int)floorf(pt[1] * m->freq) +
                     (int)floorf(pt[2] * m->freq + 0.5f)) &
                    1);
    }
    break;
  case T_STRIPES: mix = (float)((int)floorf(pt[2] * m->freq) & 1); break;
  default: { /* rings around a torus */
    float a = atan2f(pt[1] - pr->p[1], pt[0] - pr->p[0]) / (2.0f * (float)M_PI) + 0.5f;
    mix = (float)((int)floorf(a * m->freq) & 1);
    break;
  }
  }
  for (int k = 0; k < 3; k++) out[k] = mix > 0.5f ? m->b[k] : m->a[k];
}

/* Colour of the first hit along a ray, or 0 when it leaves the scene. */
static int shade(const struct scene *s, const float *o, const float *d, float *rgb, int *prim) {
  struct hit h;
  if (!trace(s, o, d, 0, &h)) {
    *prim = -1;
    return 0;
  }
  *prim = h.prim;
  float n[3] = {h.n[0], h.n[1], h.n[2]};
  if (dot3(n, d) > 0)
    for (int k = 0; k < 3; k++) n[k] = -n[k];
  float pt[3] = {o[0] + h.t * d[0], o[1] + h.t * d[1], o[2] + h.t * d[2]};
  float a[3];
  albedo(s, &s->prims[h.prim], pt, a);
  float ndl = dot3(n, s->light);
  float lit = 0;
  if (ndl > 0) {
    float so[3] = {pt[0] + 2 * EPS * n[0], pt[1] + 2 * EPS * n[1], pt[2] + 2 * EPS * n[2]};
    struct hit sh;
    lit = trace(s, so, s->light, 1, &sh) ? 0.0f : ndl;
  }
  /* A fill term from the side opposite the light keeps shadowed faces readable. */
  float fill = 0.12f * fmaxf(0.0f, -dot3(n, s->light));
  float shade_f = 0.32f + 0.72f * lit + fill;
  for (int k = 0; k < 3; k++) rgb[k] = fminf(1.0f, a[k] * shade_f);
  return 1;
}

/* ---- cameras ---- */

void gs_gen_view_c2w(const struct gs_gen_opts *opts, int test, uint32_t index, float c2w[16]) {
  /* Each view draws its own stream, so a view's camera does not depend on the number of views. */
  struct gs_rng rng;
  gs_rng_seed(&rng, opts->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)(test ? 2 : 1) << 40) ^ index);
  float zc = -0.15f + 1.05f * gs_rng_uniform(&rng); /* uniform in area between these heights */
  if (zc > 0.93f) zc = 0.93f;
  float az = 2.0f * (float)M_PI * gs_rng_uniform(&rng);
  float rxy = sqrtf(1.0f - zc * zc);
  float c[3] = {CAM_RADIUS * rxy * cosf(az), CAM_RADIUS * rxy * sinf(az), CAM_RADIUS * zc};
  /* OpenGL camera: looks down its -z, so its z axis points from the centre to the camera. */
  float z[3] = {c[0], c[1], c[2]}, up[3] = {0, 0, 1}, x[3], y[3];
  norm3(z);
  cross3(up, z, x);
  norm3(x);
  cross3(z, x, y);
  for (int i = 0; i < 3; i++) {
    c2w[4 * i + 0] = x[i];
    c2w[4 * i + 1] = y[i];
    c2w[4 * i + 2] = z[i];
    c2w[4 * i + 3] = c[i];
  }
  c2w[12] = c2w[13] = c2w[14] = 0;
  c2w[15] = 1;
}

void gs_gen_pixel_ray(const float c2w[16], uint32_t resolution, float u, float v, float origin[3],
                      float dir[3]) {
  float f = 0.5f * (float)resolution / tanf(0.5f * GS_GEN_FOV_X);
  float half = 0.5f * (float)resolution;
  float dc[3] = {(u - half) / f, -(v - half) / f, -1.0f}; /* OpenGL camera axes */
  for (int i = 0; i < 3; i++) {
    dir[i] = c2w[4 * i] * dc[0] + c2w[4 * i + 1] * dc[1] + c2w[4 * i + 2] * dc[2];
    origin[i] = c2w[4 * i + 3];
  }
  norm3(dir);
}

/* The generator's lens: pinhole with a centred principal point (the NeRF layout), or the
 * distorted lens of gs_gen.h. */
void gs_gen_lens_of(const struct gs_gen_opts *o, struct gs_gen_lens *l) {
  float res = (float)o->resolution;
  l->f = 0.5f * res / tanf(0.5f * GS_GEN_FOV_X);
  l->cx = 0.5f * res;
  l->cy = 0.5f * res;
  l->k1 = l->k2 = 0.0f;
  if (o->lens == GS_GEN_LENS_DISTORTED) {
    l->cx += GS_GEN_CX_SHIFT * res;
    l->cy += GS_GEN_CY_SHIFT * res;
    int given = o->k1 != 0.0f || o->k2 != 0.0f;
    l->k1 = given ? o->k1 : GS_GEN_K1;
    l->k2 = given ? o->k2 : GS_GEN_K2;
  }
}

void gs_gen_lens_ray(const float c2w[16], const struct gs_gen_lens *l, float u, float v,
                     float origin[3], float dir[3]) {
  /* The pixel shows the distorted point (xd, yd); the ray is the pinhole point (x, y) with
   * D(x, y) = (xd, yd), D radial: x (1 + k1 r2 + k2 r2^2). Fixed-point iteration x = xd / radial
   * converges for the mild barrel lens used here (|radial - 1| < 0.05 in the image). */
  double xd = (u - l->cx) / l->f, yd = (v - l->cy) / l->f, x = xd, y = yd;
  for (int it = 0; it < 30 && (l->k1 != 0.0f || l->k2 != 0.0f); it++) {
    double r2 = x * x + y * y, radial = 1.0 + r2 * (l->k1 + r2 * l->k2);
    x = xd / radial;
    y = yd / radial;
  }
  float dc[3] = {(float)x, (float)-y, -1.0f}; /* OpenGL camera axes */
  for (int i = 0; i < 3; i++) {
    dir[i] = c2w[4 * i] * dc[0] + c2w[4 * i + 1] * dc[1] + c2w[4 * i + 2] * dc[2];
    origin[i] = c2w[4 * i + 3];
  }
  norm3(dir);
}

/* ---- rendering ---- */

static void render_view(const struct scene *s, const float c2w[16], uint32_t res,
                        const struct gs_gen_lens *lens, uint8_t *rgba, int *ids) {
  float o[3], d[3], rgb[3];
  for (uint32_t y = 0; y < res; y++)
    for (uint32_t x = 0; x < res; x++) {
      gs_gen_lens_ray(c2w, lens, x + 0.5f, y + 0.5f, o, d);
      uint8_t *px = rgba + 4 * ((size_t)y * res + x);
      if (shade(s, o, d, rgb, &ids[(size_t)y * res + x])) {
        for (int k = 0; k < 3; k++) px[k] = (uint8_t)(rgb[k] * 255.0f + 0.5f);
        px[3] = 255;
      } else {
        px[0] = px[1] = px[2] = px[3] = 0;
      }
    }
  /* Supersample pixels on an object boundary: 2x2 stratified rays; alpha = coverage, colour =
   * mean of the covered samples (straight alpha, as NeRF-synthetic PNGs store it). */
  for (uint32_t y = 0; y < res; y++)
    for (uint32_t x = 0; x < res; x++) {
      int id = ids[(size_t)y * res + x], edge = 0;
      if (x > 0 && ids[(size_t)y * res + x - 1] != id) edge = 1;
      if (x + 1 < res && ids[(size_t)y * res + x + 1] != id) edge = 1;
      if (y > 0 && ids[(size_t)(y - 1) * res + x] != id) edge = 1;
      if (y + 1 < res && ids[(size_t)(y + 1) * res + x] != id) edge = 1;
      if (!edge) continue;
      float acc[3] = {0, 0, 0};
      int hits = 0, prim;
      for (int sy = 0; sy < 2; sy++)
        for (int sx = 0; sx < 2; sx++) {
          gs_gen_lens_ray(c2w, lens, x + 0.25f + 0.5f * sx, y + 0.25f + 0.5f * sy, o, d);
          if (shade(s, o, d, rgb, &prim)) {
            hits++;
            for (int k = 0; k < 3; k++) acc[k] += rgb[k];
          }
        }
      uint8_t *px = rgba + 4 * ((size_t)y * res + x);
      if (hits == 0) {
        px[0] = px[1] = px[2] = px[3] = 0;
      } else {
        for (int k = 0; k < 3; k++) px[k] = (uint8_t)(acc[k] / hits * 255.0f + 0.5f);
        px[3] = (uint8_t)(hits * 255 / 4);
      }
    }
}

struct job {
  const struct scene *scene;
  const struct gs_gen_opts *opts;
  const char *out_dir;
  uint32_t total, next;
  pthread_mutex_t lock;
  struct sw_err err;
  int rc;
};

static void *worker(void *arg) {
  struct job *j = arg;
  uint32_t res = j->opts->resolution;
  uint8_t *rgba = malloc((size_t)res * res * 4);
  int *ids = malloc((size_t)res * res * sizeof(int));
  for (;;) {
    pthread_mutex_lock(&j->lock);
    uint32_t v = j->next++;
    int stop = j->rc != 0 || v >= j->total;
    if (!stop && (!rgba || !ids))
      j->rc = sw_err_set(&j->err, SW_ENOMEM,
                         "scene generator: out of "
                         "memory for a %ux%u image",
                         res, res);
    stop = stop || j->rc != 0;
    pthread_mutex_unlock(&j->lock);
    if (stop) break;
    int test = v >= j->opts->train_views;
    uint32_t idx = test ? v - j->opts->train_views : v;
    float c2w[16];
    gs_gen_view_c2w(j->opts, test, idx, c2w);
    struct gs_gen_lens lens;
    gs_gen_lens_of(j->opts, &lens);
    render_view(j->scene, c2w, res, &lens, rgba, ids);
    char path[4200];
    if (j->opts->layout == GS_GEN_LAYOUT_NERF)
      snprintf(path, sizeof path, "%s/%s/r_%u.png", j->out_dir, test ? "test" : "train", idx);
    else
      snprintf(path, sizeof path, "%s/images/" GS_GEN_IMAGE_NAME, j->out_dir, idx);
    struct sw_err e = {0};
    int rc = gs_png_write8(path, rgba, res, res, 4, &e);
    if (rc) {
      pthread_mutex_lock(&j->lock);
      if (!j->rc) {
        j->rc = rc;
        j->err = e;
      }
      pthread_mutex_unlock(&j->lock);
      break;
    }
  }
  free(rgba);
  free(ids);
  return NULL;
}

static int write_json(const char *out_dir, const struct gs_gen_opts *o, int test,
                      struct sw_err *err) {
  json_t *root = json_object();
  json_object_set_new(root, "camera_angle_x", json_real(GS_GEN_FOV_X));
  json_t *aabb = json_array();
  json_array_append_new(aabb, json_pack("[fff]", -1.2, -1.2, -1.2));
  json_array_append_new(aabb, json_pack("[fff]", 1.2, 1.2, 1.2));
  json_object_set_new(root, "aabb", aabb);
  json_object_set_new(root, "generator",
                      json_pack("{s:s, s:I, s:i}", "kind", gs_gen_kind_name(o->kind), "seed",
                                (json_int_t)o->seed, "resolution", (int)o->resolution));
  json_t *frames = json_array();
  uint32_t n = test ? o->test_views : o->train_views;
  for (uint32_t i = 0; i < n; i++) {
    char fp[64];
    snprintf(fp, sizeof fp, "./%s/r_%u", test ? "test" : "train", i);
    gs_gen_frame_append(frames, o, test, i, fp);
  }
  json_object_set_new(root, "frames", frames);
  /* 9 significant digits round-trip every float exactly, so the loader sees the generator's
   * cameras bit for bit. */
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
  json_decref(root);
  if (!text) return sw_err_set(err, SW_ENOMEM, "scene generator: out of memory for the json");
  char path[4200];
  snprintf(path, sizeof path, "%s/transforms_%s.json", out_dir, test ? "test" : "train");
  int rc = sw_fs_write_atomic(path, text, strlen(text), err);
  free(text);
  return rc;
}

/* ---- the capture layouts ---- */

static const char *layout_names[] = {"nerf", "colmap-bin", "colmap-txt", "transforms"};
static const char *lens_names[] = {"pinhole", "distorted"};

int gs_gen_layout_parse(const char *name, enum gs_gen_layout *layout, struct sw_err *err) {
  for (int i = 0; i < 4; i++)
    if (name && !strcmp(name, layout_names[i])) {
      *layout = (enum gs_gen_layout)i;
      return 0;
    }
  return sw_err_set(err, SW_EINVAL,
                    "unknown layout '%s' (layouts: nerf, colmap-bin, colmap-txt, "
                    "transforms)",
                    name ? name : "");
}

int gs_gen_lens_parse(const char *name, enum gs_gen_lens_kind *lens, struct sw_err *err) {
  for (int i = 0; i < 2; i++)
    if (name && !strcmp(name, lens_names[i])) {
      *lens = (enum gs_gen_lens_kind)i;
      return 0;
    }
  return sw_err_set(err, SW_EINVAL, "unknown lens '%s' (lenses: pinhole, distorted)",
                    name ? name : "");
}

/* The traced scene as the capture writers (gs_gen_capture.c) see it: the first member is the
 * scene, so a pointer to one is a pointer to the other. */
struct gs_gen_world {
  struct scene s;
};

int gs_gen_world_hit(const struct gs_gen_world *w, const float o[3], const float d[3], float p[3],
                     float rgb[3]) {
  struct hit h;
  int prim;
  if (!trace(&w->s, o, d, 0, &h) || !shade(&w->s, o, d, rgb, &prim)) return 0;
  for (int k = 0; k < 3; k++) p[k] = o[k] + h.t * d[k];
  return 1;
}

int gs_gen_scene(const char *out_dir, const struct gs_gen_opts *o, struct sw_err *err) {
  if ((unsigned)o->kind > 1)
    return sw_err_set(err, SW_EINVAL, "scene generator: bad kind %d", o->kind);
  if (o->train_views < 1 || o->train_views > 100000)
    return sw_err_set(err, SW_EINVAL, "scene generator: train views %u out of range 1..100000",
                      o->train_views);
  if (o->test_views > 100000)
    return sw_err_set(err, SW_EINVAL, "scene generator: test views %u out of range 0..100000",
                      o->test_views);
  if (o->resolution < 8 || o->resolution > 4096)
    return sw_err_set(err, SW_EINVAL, "scene generator: resolution %u out of range 8..4096",
                      o->resolution);
  if ((unsigned)o->layout > 3 || (unsigned)o->lens > 1)
    return sw_err_set(err, SW_EINVAL, "scene generator: bad layout %d or lens %d", o->layout,
                      o->lens);
  if (!(fabsf(o->k1) <= 0.5f && fabsf(o->k2) <= 0.5f))
    return sw_err_set(err, SW_EINVAL, "scene generator: k1 %g, k2 %g out of range [-0.5, 0.5]",
                      (double)o->k1, (double)o->k2);
  if (o->layout == GS_GEN_LAYOUT_NERF && o->lens != GS_GEN_LENS_PINHOLE)
    return sw_err_set(err, SW_EINVAL,
                      "scene generator: the NeRF-synthetic layout has no lens "
                      "model; the distorted lens needs --layout colmap-bin, colmap-txt or "
                      "transforms");
  if (o->layout != GS_GEN_LAYOUT_NERF && o->test_views)
    return sw_err_set(err, SW_EINVAL,
                      "scene generator: the %s layout has no test split (the "
                      "loader holds out every 8th view); --test-views must be 0",
                      layout_names[o->layout]);
  struct scene s = {0};
  int rc = 0;
  struct gs_rng rng;
  gs_rng_seed(&rng, o->seed ^ 0x243f6a8885a308d3ull);
  if ((o->kind == GS_GEN_BRICKS ? build_bricks(&s, &rng) : build_shapes(&s, &rng)) != 0) {
    rc = sw_err_set(err, SW_ENOMEM, "scene generator: out of memory");
    goto done;
  }
  s.order = malloc((size_t)s.n * sizeof *s.order);
  s.nodes = malloc((size_t)2 * s.n * sizeof *s.nodes);
  if (!s.order || !s.nodes) {
    rc = sw_err_set(err, SW_ENOMEM, "scene generator: out of memory");
    goto done;
  }
  for (int i = 0; i < s.n; i++) s.order[i] = i;
  bvh_build(&s, 0, s.n);
  s.light[0] = 0.45f, s.light[1] = 0.30f, s.light[2] = 0.84f;
  norm3(s.light);

  char path[4200];
  snprintf(path, sizeof path, "%s/%s", out_dir,
           o->layout == GS_GEN_LAYOUT_NERF ? "train" : "images");
  if ((rc = sw_fs_mkdir_p(path, err))) goto done;
  if (o->layout != GS_GEN_LAYOUT_NERF) {
    /* nothing more: the description files are written after the images */
  } else if (o->test_views) {
    snprintf(path, sizeof path, "%s/test", out_dir);
    if ((rc = sw_fs_mkdir_p(path, err))) goto done;
  } else {
    /* A stale test split from an earlier run would be read instead of the held-out one. */
    snprintf(path, sizeof path, "%s/transforms_test.json", out_dir);
    unlink(path);
  }
  struct job j = {
      .scene = &s, .opts = o, .out_dir = out_dir, .total = o->train_views + o->test_views};
  pthread_mutex_init(&j.lock, NULL);
  int nt = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (nt < 1) nt = 1;
  if (nt > 64) nt = 64;
  if ((uint32_t)nt > j.total) nt = (int)j.total;
  pthread_t th[64];
  int started = 0;
  for (int i = 1; i < nt; i++) {
    if (pthread_create(&th[i], NULL, worker, &j)) break;
    started++;
  }
  worker(&j); /* this thread works too */
  for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
  pthread_mutex_destroy(&j.lock);
  if (j.rc) {
    rc = sw_err_set(err, j.rc, "%s", j.err.msg);
    goto done;
  }
  if (o->layout == GS_GEN_LAYOUT_COLMAP_BIN || o->layout == GS_GEN_LAYOUT_COLMAP_TXT) {
    rc = gs_gen_write_colmap(out_dir, o, (const struct gs_gen_world *)&s,
                             o->layout == GS_GEN_LAYOUT_COLMAP_BIN, err);
    goto done;
  }
  if (o->layout == GS_GEN_LAYOUT_TRANSFORMS) {
    rc = gs_gen_write_transforms(out_dir, o, err);
    goto done;
  }
  if ((rc = write_json(out_dir, o, 0, err))) goto done;
  if (o->test_views && (rc = write_json(out_dir, o, 1, err))) goto done;
done:
  free(s.prims);
  free(s.order);
  free(s.nodes);
  return rc;
}

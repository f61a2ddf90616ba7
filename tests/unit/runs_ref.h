/* runs_ref.h: the per-splat rasterize backward's runs of a reference frame, made on the host as
 * bucket_alloc.comp and rasterize_fwd_bucket.comp define them (shaders/gs_shared.h, "Buckets"),
 * for test_gpu_bwd (the backward's inputs) and test_gpu_fwd (the GPU forward's runs against
 * these). Groups are in tile order here; on the GPU their order follows the atomics, so compare
 * through tile_base. A state the forward never writes (the pixel finished before the run) is NaN
 * here. */
#ifndef RUNS_REF_H
#define RUNS_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "gs_ref.h"
#include "gs_shared.h"

struct ref_runs {
  uint32_t bucket, n_groups, tiles;
  uint32_t *tile_base;    /* tiles: first run, ~0 = none */
  uint32_t *tile_maxlast; /* tiles */
  uint32_t *groups;       /* 2 * n_groups: (tile, first position) */
  float *state;           /* 4 per pixel of a tile, 256 per run, GS_BUCKET_GROUP runs per group */
  uint32_t meta[GS_BMETA_WORDS];
};

static void ref_runs_make(const struct gs_ref_frame *f, uint32_t bucket, struct ref_runs *r) {
  uint32_t tiles = f->tiles_x * f->tiles_y, per_group = bucket * GS_BUCKET_GROUP;
  r->bucket = bucket;
  r->tiles = tiles;
  r->n_groups = 0;
  for (uint32_t t = 0; t < tiles; t++) {
    uint32_t n = f->ranges[2 * t + 1] - f->ranges[2 * t];
    r->n_groups += (n + per_group - 1) / per_group;
  }
  r->tile_base = malloc(4 * (size_t)tiles);
  r->tile_maxlast = calloc(tiles, 4);
  r->groups = malloc(8 * (size_t)(r->n_groups ? r->n_groups : 1));
  size_t nstate = 4 * (size_t)GS_RASTER_WG * GS_BUCKET_GROUP * (r->n_groups ? r->n_groups : 1);
  r->state = malloc(4 * nstate);
  for (size_t i = 0; i < nstate; i++) r->state[i] = NAN;
  uint32_t g = 0;
  for (uint32_t t = 0; t < tiles; t++) {
    uint32_t start = f->ranges[2 * t], end = f->ranges[2 * t + 1], n = end - start;
    uint32_t ng = (n + per_group - 1) / per_group;
    r->tile_base[t] = ng ? g * GS_BUCKET_GROUP : ~0u;
    for (uint32_t k = 0; k < ng; k++) {
      r->groups[2 * (g + k)] = t;
      r->groups[2 * (g + k) + 1] = k * per_group;
    }
    uint32_t tx = t % f->tiles_x, ty = t / f->tiles_x;
    for (uint32_t i = 0; i < GS_RASTER_WG; i++) {
      uint32_t px = tx * GS_TILE + i % GS_TILE, py = ty * GS_TILE + i / GS_TILE;
      if (px >= f->width || py >= f->height) continue;
      size_t p = (size_t)py * f->width + px;
      if (f->last[p] > r->tile_maxlast[t]) r->tile_maxlast[t] = f->last[p];
      /* The forward's walk (gs_ref_rasterize), recording the state at each run's start. */
      float pxc = (float)px + 0.5f, pyc = (float)py + 0.5f, tr = 1.0f, col[3] = {0, 0, 0};
      for (uint32_t q = 0; q < n; q++) {
        if (q % bucket == 0) {
          float *s = r->state + 4 * ((size_t)(g * GS_BUCKET_GROUP + q / bucket) * GS_RASTER_WG + i);
          s[0] = col[0], s[1] = col[1], s[2] = col[2], s[3] = tr;
        }
        const struct gs_ref_splat *s = &f->splats[f->ids[start + q]];
        float dx = s->mean2d[0] - pxc, dy = s->mean2d[1] - pyc;
        float sigma =
            0.5f * (s->conic[0] * dx * dx + s->conic[2] * dy * dy) + s->conic[1] * dx * dy;
        if (sigma < 0.0f) continue;
        float a = s->opacity * expf(-sigma);
        float alpha = a < f->alpha_max ? a : f->alpha_max;
        if (!(alpha >= GS_ALPHA_MIN)) continue;
        float next = tr * (1.0f - alpha);
        if (next < GS_T_MIN) break;
        for (int c = 0; c < 3; c++) col[c] += s->rgb[c] * alpha * tr;
        tr = next;
      }
    }
    g += ng;
  }
  r->meta[GS_BMETA_GROUPS] = r->n_groups;
  r->meta[GS_BMETA_ARGS] = r->n_groups;
  r->meta[GS_BMETA_ARGS + 1] = r->n_groups ? 1 : 0;
  r->meta[GS_BMETA_ARGS + 2] = 1;
}

static void ref_runs_free(struct ref_runs *r) {
  free(r->tile_base);
  free(r->tile_maxlast);
  free(r->groups);
  free(r->state);
}

#endif

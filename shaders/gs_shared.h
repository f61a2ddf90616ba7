/* gs_shared.h: data layouts shared by the host (C) and the compute shaders (GLSL 450), defined once
 * (STYLE rule 8). The file is valid as both: GLSL sees GS_GLSL (set by the shaders before the
 * include), C sees uint32_t. Only 32-bit scalars and arrays of them are used, so std430 (storage
 * buffers and push constants) and C agree on every offset; pipeline/gs_vk.c _Static_asserts the
 * sizes.
 *
 * Buffers of the forward pass (all kept on the GPU between forward and backward):
 *   means[3n] log_scales[3n] quats[4n] opacity[n] sh[48n]   the model (struct gs_model layout)
 *   splats: struct gs_splat2d[n]                             project_fwd output
 *   tiles_touched: uint[n]                                   tile_count output (0 = culled)
 *   offsets: uint[n]                                         inclusive scan of tiles_touched
 *   keys: uint[2 * pairs]  (lo = depth bits, hi = tile id)   emit_pairs output, then sorted
 *   values: uint[pairs]    (splat index)
 *   ranges: uint[2 * tiles] ([start, end) into keys)         tile_ranges output
 *   rgb: float[3 * w * h], final_t: float[w * h], last: uint[w * h]   rasterize_fwd output
 *   counters: uint[GS_CTR_WORDS]                             pair count and overflow flag */
#ifndef GS_SHARED_H
#define GS_SHARED_H

#ifdef GS_GLSL
#define GS_U32 uint
#else
#include <stdint.h>
#define GS_U32 uint32_t
#endif

/* The forward contract's constants (pipeline/gs_types.h) in a form GLSL reads too; test_gpu_fwd
 * checks that they equal the C ones. */
#define GS_TILE_PX 16
#define GS_SH_COEFFS_N 16
#define GS_K_NEAR_Z 0.01f
#define GS_K_DILATION 0.3f
#define GS_K_ALPHA_MIN (1.0f / 255.0f)
#define GS_K_ALPHA_MAX 0.99f
#define GS_K_T_MIN 1e-4f

/* Workgroup size of the 1-D kernels (project, tile count, emit, ranges, scan). */
#define GS_WG 256
/* Scan: each workgroup scans GS_SCAN_BLOCK elements (GS_WG threads x 4). */
#define GS_SCAN_ITEMS 4
#define GS_SCAN_BLOCK (GS_WG * GS_SCAN_ITEMS)
/* Radix sort: 8-bit digits; a workgroup of GS_SORT_WG threads owns GS_SORT_BLOCK keys and walks
 * them in chunks of GS_SORT_WG. */
#define GS_RADIX_BITS 8
#define GS_RADIX (1 << GS_RADIX_BITS)
#define GS_SORT_WG 256
#ifndef GS_SORT_ITEMS /* a benchmark build may set it (CMake SW_SORT_ITEMS) */
#define GS_SORT_ITEMS 8
#endif
#define GS_SORT_BLOCK (GS_SORT_WG * GS_SORT_ITEMS)
/* Rasterize: one workgroup per 16x16 tile (GS_TILE in gs_types.h). */
#define GS_RASTER_TILE 16
#define GS_RASTER_WG (GS_RASTER_TILE * GS_RASTER_TILE)

/* counters buffer words */
#define GS_CTR_PAIRS 0    /* total (splat, tile) pairs of the frame (may exceed the capacity) */
#define GS_CTR_CAPACITY 1 /* capacity the frame was recorded with (written by the host) */
/* Raised by emit_pairs when a frame overflows the arena, lowered only by the host once it has
 * handled the overflow (gs_fwd_finish*): while it is up, project_bwd and adam leave the model and
 * the densification statistics alone, in that frame and in any frame submitted behind it before
 * the host saw the overflow (the trainer keeps two iterations in flight). */
#define GS_CTR_STALE 2
#define GS_CTR_WORDS 4

/* Specialization constant ids (constant_id) of the forward and sort kernels. */
#define GS_SPEC_SIGMA_SKIP 0     /* rasterize_fwd: 1 = skip sigma >= GS_SIGMA_SKIP early */
#define GS_SPEC_ACCUM_F16 1      /* rasterize_fwd: 1 = accumulate colour rounded to half */
#define GS_SPEC_ALPHA_MAX 2      /* rasterize_fwd: the alpha clamp (float; GS_K_ALPHA_MAX) */
#define GS_SPEC_FWD_STEP 4       /* rasterize_fwd: enum gs_fwd_step (after GS_SPEC_BUCKET, 3) */
#define GS_SPEC_FWD_CULL 5       /* rasterize_fwd: 1 = `fwd_cull: rows` */
#define GS_SPEC_FWD_PREFETCH 6   /* rasterize_fwd: 1 = `fwd_stage: prefetch` */
#define GS_SPEC_FWD_ORDER 7      /* rasterize_fwd: 1 = `fwd_order: dense_first` */
#define GS_SPEC_SH_VEC4 0        /* project_fwd: 1 = `project_sh: vec4` */
#define GS_SPEC_SCATTER_BALLOT 0 /* sort_scatter: 1 = subgroup-ballot ranking, 0 = serial scan */
#define GS_SPEC_SUBGROUPS 1      /* sort_scatter: most subgroups per workgroup for the table path */
/* tile_count, emit_pairs: 1 = only the tiles the ellipse meets (tile_cull.glsl) */
#define GS_SPEC_TILE_CULL 0
/* tile_count, emit_pairs (id 1), tile_ranges (id 0): `sort: depth_first`. tile_count also
 * writes every splat's depth key (depth bits, 0) and index for a sort of the splats by depth;
 * depth_gather puts the tile counts in that order for the scan; emit_pairs walks the splats in it
 * and writes keys (tile id, 0), which are sorted by the tile id alone: the same order as the
 * (tile, depth) keys of `sort: pairs`, since both sorts are stable and ties of depth keep the
 * splats' index order either way. */
#define GS_SPEC_DEPTH_FIRST 1
#define GS_SPEC_RANGES_DEPTH_FIRST 0
/* Shared memory of the two scatter modules (sort_scatter.glsl), bytes. */
#define GS_SCATTER_STAGED_SHARED (4 * (3 * GS_RADIX + 8 * (GS_RADIX / 2) + 3 * GS_SORT_BLOCK))
#define GS_SCATTER_FLAT_SHARED (4 * (3 * GS_RADIX + 32 * (GS_RADIX / 2)))
/* Buckets of the per-splat rasterize backward (`rasterize_bwd: splat`, rasterize_bwd_splat.glsl):
 * each tile's sorted splats in runs of BUCKET (the device's subgroup size), GS_BUCKET_GROUP runs
 * of one tile per backward workgroup. bucket_alloc.comp gives each tile ceil(runs / GROUP) groups
 * (an entry (tile, first position) each, in a list counted by bucket_meta) and the index of its
 * first run (tile_base, ~0 = none); rasterize_fwd_bucket.comp writes, per run and pixel of the
 * tile, the compositing state (colour so far, T) in front of the run's first splat (bucket_state:
 * vec4[runs * 256]) and each tile's largest last contributor (tile_maxlast). */
#define GS_BUCKET_GROUP 4
#define GS_BUCKET_MAX 32 /* largest run (subgroup size) the backward's shared memory holds */
#define GS_SPEC_BUCKET 3 /* rasterize_fwd_bucket: splats per run (bucket_alloc: id 0) */
/* bucket_meta words */
#define GS_BMETA_GROUPS 0 /* groups allocated (atomic; may exceed max_groups, then clamped) */
#define GS_BMETA_ARGS 1   /* words 1..3: the backward's VkDispatchIndirectCommand */
#define GS_BMETA_WORDS 4

/* alpha <= opacity exp(-sigma) <= exp(-5.55) = 0.003887 < 1/255 = 0.003922 (opacity is a
 * sigmoid, at most 1): a splat this far out can never pass the alpha test, whatever the alpha
 * clamp (GS_SPEC_ALPHA_MAX) is. */
#define GS_SIGMA_SKIP 5.55f

/* One projected splat (64 bytes). Culled splats have radius 0 and an empty rectangle. */
struct gs_splat2d {
  float mean2d[2]; /* pixels */
  float conic[3];  /* a, b, c of sigma = 0.5 (a dx^2 + c dy^2) + b dx dy */
  float opacity;   /* after the sigmoid */
  float rgb[3];    /* clamped colour */
  float depth;     /* view-space z */
  float cov2d[3];  /* xx, xy, yy (dilation included), kept for backward */
  GS_U32 radius;
  GS_U32 rect[2]; /* tile x0 | y0 << 16, x1 | y1 << 16 (x1, y1 exclusive) */
};

/* project_fwd */
struct gs_pc_project {
  float viewmat[12]; /* rows 0..2 of the world-to-camera matrix */
  float fx, fy, cx, cy;
  float campos[3];
  GS_U32 n; /* splats */
  GS_U32 width, height, tiles_x, tiles_y;
  GS_U32 sh_degree;
};

/* tile_count, emit_pairs */
struct gs_pc_bin {
  GS_U32 n; /* splats */
  GS_U32 tiles_x;
  GS_U32 capacity; /* pairs the keys/values buffers hold */
  GS_U32 pad;
};

/* scan_block / scan_add: inclusive scan of n elements in blocks of GS_SCAN_BLOCK. Sizes are always
 * known on the host: pair-sized work is dispatched for the arena's capacity and reads the true
 * count from the counters buffer, so a frame needs no read-back. */
struct gs_pc_scan {
  GS_U32 n;
  GS_U32 pad[3];
};

/* tile_ranges */
struct gs_pc_ranges {
  GS_U32 num_tiles;
  GS_U32 pad[3];
};

/* sort_hist / sort_scatter: keys = counters[GS_CTR_PAIRS] clamped to capacity, or n when
 * count_index is 0xffffffff. */
struct gs_pc_sort {
  GS_U32 n;
  GS_U32 count_index;
  GS_U32 capacity;
  GS_U32 shift;      /* bit of the 64-bit key this pass starts at (0, 8, ..., 56) */
  GS_U32 num_blocks; /* blocks the histogram is laid out for (digit-major: [digit][block]) */
  GS_U32 pad[3];
};

/* bucket_alloc, bucket_args */
struct gs_pc_bucket {
  GS_U32 num_tiles;
  GS_U32 max_groups; /* entries the group list holds */
  GS_U32 max_x;      /* largest workgroup count of one dispatch dimension */
  GS_U32 pad;
};

/* rasterize_fwd, rasterize_bwd */
struct gs_pc_raster {
  GS_U32 width, height, tiles_x, tiles_y;
  float background[3];
  float fx_scale; /* deterministic rasterize_bwd only: fixed-point units per unit of gradient
                     (set by gs_tk_record_raster_bwd; the forward ignores it) */
};

#endif

#version 450
// bucket_alloc.comp: for the per-splat rasterize backward (`rasterize_bwd: splat`), one thread per
// tile: the tile's sorted splats in runs of BUCKET, GS_BUCKET_GROUP runs per group (one backward
// workgroup). Takes ceil(runs / GROUP) entries of the group list with one atomic add, writes them
// as (tile, position of the group's first splat) and the tile's first run index, group * GROUP,
// to tile_base (~0 when the tile has no splats). The list's order depends on the atomics; nothing
// reads it in order. Sized on the host for tiles + capacity / (BUCKET GROUP) groups, which no
// frame within the pair arena can exceed; a frame past it (never seen) gets ~0 and no entries.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(constant_id = 0) const uint BUCKET = 32u; // splats per run
layout(std430, binding = 0) readonly buffer Ranges { uint ranges[]; };
layout(std430, binding = 1) writeonly buffer TileBase { uint tile_base[]; };
layout(std430, binding = 2) writeonly buffer Groups { uint groups[]; };
layout(std430, binding = 3) buffer Meta { uint meta[]; };
layout(push_constant, std430) uniform PC { gs_pc_bucket pc; };

void main() {
  uint t = gl_GlobalInvocationID.x;
  if (t >= pc.num_tiles) return;
  uint start = ranges[2u * t], end = ranges[2u * t + 1u];
  uint n = end > start ? end - start : 0u;
  uint per_group = BUCKET * uint(GS_BUCKET_GROUP);
  uint ng = (n + per_group - 1u) / per_group;
  if (ng == 0u) {
    tile_base[t] = ~0u;
    return;
  }
  uint g0 = atomicAdd(meta[GS_BMETA_GROUPS], ng);
  if (g0 >= pc.max_groups || ng > pc.max_groups - g0) {
    tile_base[t] = ~0u;
    return;
  }
  tile_base[t] = g0 * uint(GS_BUCKET_GROUP);
  for (uint k = 0u; k < ng; k++) {
    groups[2u * (g0 + k)] = t;
    groups[2u * (g0 + k) + 1u] = k * per_group;
  }
}

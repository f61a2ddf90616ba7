#version 450
// bucket_args.comp: one thread: the per-splat rasterize backward's dispatch size from the group
// count bucket_alloc.comp left (clamped to the list's length), as a VkDispatchIndirectCommand in
// bucket_meta words 1..3 (a 2-D grid: x at most max_x).
#include "gs_common.glsl"

layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Meta { uint meta[]; };
layout(push_constant, std430) uniform PC { gs_pc_bucket pc; };

void main() {
  uint g = min(meta[GS_BMETA_GROUPS], pc.max_groups);
  uint x = min(g, pc.max_x);
  meta[GS_BMETA_ARGS] = x;
  meta[GS_BMETA_ARGS + 1u] = x == 0u ? 0u : (g + x - 1u) / x;
  meta[GS_BMETA_ARGS + 2u] = 1u;
}

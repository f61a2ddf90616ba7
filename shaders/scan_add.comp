#version 450
// scan_add.comp: second half of the multi-level scan: adds the inclusive scan of the block sums of
// all earlier blocks to every element of a block.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) buffer Data { uint data[]; };
layout(std430, binding = 1) readonly buffer Sums { uint sums[]; };
layout(push_constant, std430) uniform PC { gs_pc_scan pc; };

void main() {
  uint block = gl_WorkGroupID.x;
  if (block == 0) return;
  uint add = sums[block - 1];
  uint base = block * GS_SCAN_BLOCK + gl_LocalInvocationID.x * GS_SCAN_ITEMS;
  for (uint k = 0; k < GS_SCAN_ITEMS; k++) {
    uint i = base + k;
    if (i < pc.n) data[i] += add;
  }
}

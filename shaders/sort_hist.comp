#version 450
// sort_hist.comp: radix sort pass, step 1 of 3: per block of GS_SORT_BLOCK keys, the count of
// each digit, written digit-major (hist[digit * num_blocks + block]) so that sort_scan can scan
// each digit's row over the blocks. Blocks past the key count write zeros (the work covers a
// fixed, host-known number of blocks).
#include "gs_common.glsl"

layout(local_size_x = GS_SORT_WG) in;
layout(std430, binding = 0) readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) writeonly buffer Hist { uint hist[]; };
layout(std430, binding = 2) readonly buffer Counters { uint counters[]; };
layout(push_constant, std430) uniform PC { gs_pc_sort pc; };

#include "sort_common.glsl"

shared uint s_hist[GS_RADIX];

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint n = sort_count(pc.n, pc.count_index, pc.capacity);
  for (uint block = gl_WorkGroupID.x; block < pc.num_blocks; block += gl_NumWorkGroups.x) {
    for (uint d = tid; d < GS_RADIX; d += GS_SORT_WG) s_hist[d] = 0u;
    barrier();
    uint base = block * GS_SORT_BLOCK;
    for (uint k = 0; k < GS_SORT_ITEMS; k++) {
      uint i = base + k * GS_SORT_WG + tid;
      if (i < n) atomicAdd(s_hist[sort_digit(i, pc.shift)], 1u);
    }
    barrier();
    for (uint d = tid; d < GS_RADIX; d += GS_SORT_WG) hist[d * pc.num_blocks + block] = s_hist[d];
    barrier();
  }
}

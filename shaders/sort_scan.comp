#version 450
// sort_scan.comp: radix sort pass, step 2 of 3: one workgroup per digit scans that digit's row of
// the histogram (hist[digit * num_blocks + block], per-block counts) in place into an inclusive
// prefix over the blocks, and writes the row's total to totals[digit]. The scatter turns the
// totals into each digit's start (an exclusive scan over 256 digits in shared memory), so a pass
// needs one scan dispatch instead of a multi-level scan of the whole histogram.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) buffer Hist { uint hist[]; };
layout(std430, binding = 1) writeonly buffer Totals { uint totals[]; };
layout(push_constant, std430) uniform PC { gs_pc_sort pc; };

shared uint s_tot[GS_WG];

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint row = gl_WorkGroupID.x * pc.num_blocks;
  uint carry = 0u;
  for (uint start = 0u; start < pc.num_blocks; start += GS_SCAN_BLOCK) {
    uint base = start + tid * GS_SCAN_ITEMS;
    uint v[GS_SCAN_ITEMS];
    uint run = 0u;
    for (uint k = 0u; k < GS_SCAN_ITEMS; k++) {
      uint i = base + k;
      run += i < pc.num_blocks ? hist[row + i] : 0u;
      v[k] = run;
    }
    s_tot[tid] = run;
    barrier();
    for (uint off = 1u; off < GS_WG; off <<= 1) {
      uint add = tid >= off ? s_tot[tid - off] : 0u;
      barrier();
      s_tot[tid] += add;
      barrier();
    }
    uint before = carry + s_tot[tid] - run;
    for (uint k = 0u; k < GS_SCAN_ITEMS; k++) {
      uint i = base + k;
      if (i < pc.num_blocks) hist[row + i] = before + v[k];
    }
    carry += s_tot[GS_WG - 1];
    barrier();
  }
  if (tid == 0u) totals[gl_WorkGroupID.x] = carry;
}

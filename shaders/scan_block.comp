#version 450
// scan_block.comp: inclusive prefix sum of data[0..n) in place, one block of GS_SCAN_BLOCK
// elements per workgroup (4 per thread), and the block's total into sums[block]. Blocks past n
// write a zero sum, so an upper level may scan a fixed, host-known number of block sums.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) buffer Data { uint data[]; };
layout(std430, binding = 1) writeonly buffer Sums { uint sums[]; };
layout(push_constant, std430) uniform PC { gs_pc_scan pc; };

shared uint s_tot[GS_WG];

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint block = gl_WorkGroupID.x;
  uint base = block * GS_SCAN_BLOCK + tid * GS_SCAN_ITEMS;
  uint v[GS_SCAN_ITEMS];
  uint run = 0;
  for (uint k = 0; k < GS_SCAN_ITEMS; k++) {
    uint i = base + k;
    run += i < pc.n ? data[i] : 0u;
    v[k] = run;
  }
  s_tot[tid] = run;
  barrier();
  // Hillis-Steele scan of the per-thread totals.
  for (uint off = 1; off < GS_WG; off <<= 1) {
    uint add = tid >= off ? s_tot[tid - off] : 0u;
    barrier();
    s_tot[tid] += add;
    barrier();
  }
  uint before = s_tot[tid] - run;
  for (uint k = 0; k < GS_SCAN_ITEMS; k++) {
    uint i = base + k;
    if (i < pc.n) data[i] = before + v[k];
  }
  if (tid == GS_WG - 1) sums[block] = s_tot[tid];
}

#version 450
// sort_scatter.comp: radix sort pass, step 2: moves every key/value of a block to its place. A
// block's keys are walked in chunks of GS_SORT_WG in index order; each key's rank among equal
// digits before it in the chunk comes from one of two variants (specialization constant
// GS_SPEC_SCATTER_BALLOT), both stable and bit-identical:
//  - serial (0): each invocation counts equal digits of the invocations before it in shared memory;
//  - ballot (1): two levels: inside a subgroup the ballot of lanes with the same digit gives the
//    rank; across subgroups, the subgroups take their turn in order on the per-digit counters.
// Nothing assumes a subgroup size: lanes map to keys by gl_SubgroupID * gl_SubgroupSize +
// gl_SubgroupInvocationID (lavapipe 8 lanes, NVIDIA and Apple 32).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "gs_common.glsl"

layout(local_size_x = GS_SORT_WG) in;
layout(constant_id = GS_SPEC_SCATTER_BALLOT) const uint BALLOT = 0;

layout(std430, binding = 0) readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) readonly buffer ValsIn { uint vals_in[]; };
layout(std430, binding = 2) writeonly buffer KeysOut { uint keys_out[]; };
layout(std430, binding = 3) writeonly buffer ValsOut { uint vals_out[]; };
layout(std430, binding = 4) readonly buffer Hist { uint hist[]; };
layout(std430, binding = 5) readonly buffer Counters { uint counters[]; };
layout(push_constant, std430) uniform PC { gs_pc_sort pc; };

#include "sort_common.glsl"

shared uint s_base[GS_RADIX];
shared uint s_digit[GS_SORT_WG];

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint n = sort_count(pc.n, pc.count_index, pc.capacity);
  uint lane = BALLOT != 0u ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : tid;
  for (uint block = gl_WorkGroupID.x; block < pc.num_blocks; block += gl_NumWorkGroups.x) {
    uint base = block * GS_SORT_BLOCK;
    if (base >= n) break;
    for (uint d = tid; d < GS_RADIX; d += GS_SORT_WG) {
      uint h = d * pc.num_blocks + block;
      s_base[d] = h == 0u ? 0u : hist[h - 1u];
    }
    barrier();
    for (uint k = 0; k < GS_SORT_ITEMS; k++) {
      uint i = base + k * GS_SORT_WG + lane;
      bool valid = i < n;
      uint digit = valid ? sort_digit(i, pc.shift) : 0xffffffffu;
      uint pos = 0u;
      if (BALLOT == 0u) {
        s_digit[lane] = digit;
        barrier();
        uint rank = 0u;
        for (uint j = 0u; j < lane; j++) rank += s_digit[j] == digit ? 1u : 0u;
        if (valid) pos = s_base[digit] + rank;
        barrier();
        if (valid) atomicAdd(s_base[digit], 1u);
        barrier();
      } else {
        uvec4 peers = subgroupBallot(valid);
        for (uint b = 0u; b < uint(GS_RADIX_BITS); b++) {
          bool bit = ((digit >> b) & 1u) != 0u;
          uvec4 m = subgroupBallot(bit);
          peers &= bit ? m : ~m;
        }
        uint rank = subgroupBallotExclusiveBitCount(peers);
        uint cnt = subgroupBallotBitCount(peers);
        for (uint s = 0u; s < gl_NumSubgroups; s++) {
          if (gl_SubgroupID == s) {
            if (valid) pos = s_base[digit] + rank;
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            if (valid && rank + 1u == cnt) s_base[digit] += cnt;
          }
          barrier();
        }
      }
      if (valid) {
        keys_out[2u * pos] = keys_in[2u * i];
        keys_out[2u * pos + 1u] = keys_in[2u * i + 1u];
        vals_out[pos] = vals_in[i];
      }
    }
    barrier();
  }
}

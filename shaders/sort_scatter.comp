#version 450
// sort_scatter.comp: radix sort pass, step 3 of 3: moves every key/value of a block to its place. A
// block's keys are walked in chunks of GS_SORT_WG in index order; each key's rank among equal
// digits before it in the chunk comes from one of two variants (specialization constant
// GS_SPEC_SCATTER_BALLOT), both stable and bit-identical:
//  - serial (0): each invocation counts equal digits of the invocations before it in shared memory;
//  - ballot (1): two levels: inside a subgroup the ballot of lanes with the same digit gives the
//    rank and the count; across subgroups, a table of per-(subgroup, digit) counts (16 bits each,
//    two digits per word) is scanned over the subgroups by one invocation per digit pair. When a
//    device runs more subgroups than the table was sized for (GS_SPEC_SUBGROUPS, from the
//    smallest subgroup size the device reports), the subgroups take their turn on the per-digit
//    counters one after another instead.
// With GS_SPEC_SCATTER_STAGED (where shared memory allows), a block is first reordered by digit in
// shared memory and then written out in that order, so that neighbouring invocations write
// neighbouring addresses (runs of equal digits) instead of 256 scattered places.
// Nothing assumes a subgroup size: lanes map to keys by gl_SubgroupID * gl_SubgroupSize +
// gl_SubgroupInvocationID (lavapipe 8 lanes, NVIDIA and Apple 32).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "gs_common.glsl"

layout(local_size_x = GS_SORT_WG) in;
layout(constant_id = GS_SPEC_SCATTER_BALLOT) const uint BALLOT = 0;
layout(constant_id = GS_SPEC_SUBGROUPS) const uint NUM_SG = 32;
layout(constant_id = GS_SPEC_SCATTER_STAGED) const uint STAGED = 0;

layout(std430, binding = 0) readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) readonly buffer ValsIn { uint vals_in[]; };
layout(std430, binding = 2) writeonly buffer KeysOut { uint keys_out[]; };
layout(std430, binding = 3) writeonly buffer ValsOut { uint vals_out[]; };
layout(std430, binding = 4) readonly buffer Hist { uint hist[]; };
layout(std430, binding = 5) readonly buffer Counters { uint counters[]; };
layout(std430, binding = 6) readonly buffer Totals { uint totals[]; };
layout(push_constant, std430) uniform PC { gs_pc_sort pc; };

#include "sort_common.glsl"

shared uint s_base[2 * GS_RADIX]; // ping-pong: the chunk's bases, then the next chunk's
shared uint s_digit[BALLOT != 0u ? 1 : GS_SORT_WG];
shared uint s_tab[BALLOT != 0u ? NUM_SG * (GS_RADIX / 2) : 1];
shared uint s_g[GS_RADIX];                               // block's global base per digit
shared uint s_l[STAGED != 0u ? GS_RADIX : 1];             // block-local base per digit
shared uint s_sk[STAGED != 0u ? 2 * GS_SORT_BLOCK : 1];   // staged keys
shared uint s_sv[STAGED != 0u ? GS_SORT_BLOCK : 1];       // staged values

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint n = sort_count(pc.n, pc.count_index, pc.capacity);
  uint lane = BALLOT != 0u ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : tid;
  bool table = BALLOT != 0u && gl_NumSubgroups <= NUM_SG;
  // Where each digit starts in the output: exclusive scan of the digit totals (sort_scan), once
  // per workgroup; invocation tid owns digit tid (GS_RADIX == GS_SORT_WG).
  uint tot = totals[tid];
  s_g[tid] = tot;
  barrier();
  for (uint off = 1u; off < uint(GS_RADIX); off <<= 1) {
    uint add = tid >= off ? s_g[tid - off] : 0u;
    barrier();
    s_g[tid] += add;
    barrier();
  }
  uint digit_start = s_g[tid] - tot;
  barrier();
  for (uint block = gl_WorkGroupID.x; block < pc.num_blocks; block += gl_NumWorkGroups.x) {
    uint base = block * GS_SORT_BLOCK;
    if (base >= n) break;
    // GS_RADIX == GS_SORT_WG: invocation tid owns digit tid here.
    // hist rows hold inclusive prefixes over the blocks (sort_scan).
    uint h = tid * pc.num_blocks + block;
    uint before = block == 0u ? 0u : hist[h - 1u];
    uint g = digit_start + before;
    s_g[tid] = g;
    if (STAGED != 0u) {
      // Local bases: exclusive scan over the digits of this block's digit counts.
      uint cnt = hist[h] - before;
      s_l[tid] = cnt;
      barrier();
      for (uint off = 1u; off < uint(GS_RADIX); off <<= 1) {
        uint add = tid >= off ? s_l[tid - off] : 0u;
        barrier();
        s_l[tid] += add;
        barrier();
      }
      s_l[tid] -= cnt;
      s_base[tid] = s_l[tid];
    } else {
      s_base[tid] = g;
    }
    uint par = 0u; // which half of s_base holds this chunk's bases
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
        if (table) {
          for (uint w = tid; w < gl_NumSubgroups * (GS_RADIX / 2); w += GS_SORT_WG) s_tab[w] = 0u;
          barrier();
          uint slot = gl_SubgroupID * (GS_RADIX / 2) + (digit >> 1);
          uint sh = (digit & 1u) * 16u;
          if (valid && rank + 1u == cnt) atomicAdd(s_tab[slot], cnt << sh);
          barrier();
          // Exclusive scan of each digit's counts over the subgroups; totals give the next bases.
          if (tid < uint(GS_RADIX / 2)) {
            uint r0 = 0u, r1 = 0u;
            for (uint sg = 0u; sg < gl_NumSubgroups; sg++) {
              uint w = s_tab[sg * (GS_RADIX / 2) + tid];
              s_tab[sg * (GS_RADIX / 2) + tid] = r0 | (r1 << 16);
              r0 += w & 0xffffu;
              r1 += w >> 16;
            }
            s_base[(par ^ 1u) * GS_RADIX + 2u * tid] = s_base[par * GS_RADIX + 2u * tid] + r0;
            s_base[(par ^ 1u) * GS_RADIX + 2u * tid + 1u] =
                s_base[par * GS_RADIX + 2u * tid + 1u] + r1;
          }
          barrier();
          if (valid) pos = s_base[par * GS_RADIX + digit] + ((s_tab[slot] >> sh) & 0xffffu) + rank;
          par ^= 1u;
          barrier(); // every read of s_tab is done before the next chunk clears it
        } else {
          for (uint sg = 0u; sg < gl_NumSubgroups; sg++) {
            if (gl_SubgroupID == sg) {
              if (valid) pos = s_base[digit] + rank;
              subgroupMemoryBarrierShared();
              subgroupBarrier();
              if (valid && rank + 1u == cnt) s_base[digit] += cnt;
            }
            barrier();
          }
        }
      }
      if (valid) {
        if (STAGED != 0u) {
          s_sk[2u * pos] = keys_in[2u * i];
          s_sk[2u * pos + 1u] = keys_in[2u * i + 1u];
          s_sv[pos] = vals_in[i];
        } else {
          keys_out[2u * pos] = keys_in[2u * i];
          keys_out[2u * pos + 1u] = keys_in[2u * i + 1u];
          vals_out[pos] = vals_in[i];
        }
      }
    }
    if (STAGED != 0u) {
      barrier();
      uint count = min(n - base, uint(GS_SORT_BLOCK));
      for (uint j = tid; j < count; j += GS_SORT_WG) {
        uint lo = s_sk[2u * j], hi = s_sk[2u * j + 1u];
        uint d = ((pc.shift < 32u ? lo : hi) >> (pc.shift & 31u)) & uint(GS_RADIX - 1);
        uint gpos = s_g[d] + (j - s_l[d]);
        keys_out[2u * gpos] = lo;
        keys_out[2u * gpos + 1u] = hi;
        vals_out[gpos] = s_sv[j];
      }
    }
    barrier();
  }
}

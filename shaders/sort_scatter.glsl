// sort_scatter.glsl: radix sort pass, step 3 of 3 (the body of sort_scatter.comp and
// sort_scatter_flat.comp): moves every key/value of a block to its place. A block's keys are
// walked in chunks of GS_SORT_WG in index order; each key's rank among equal digits before it in
// the chunk comes from one of two variants (specialization constant GS_SPEC_SCATTER_BALLOT), both
// stable and bit-identical:
//  - serial (0): each invocation counts equal digits of the invocations before it in shared memory;
//  - ballot (1): two levels: inside a subgroup the ballot of lanes with the same digit gives the
//    rank and the count; across subgroups, a table of per-(subgroup, digit) counts (16 bits each,
//    two digits per word) is scanned over the subgroups by one invocation per digit pair. When a
//    workgroup runs more subgroups than the table has rows (TABLE_ROWS, or fewer by
//    GS_SPEC_SUBGROUPS), the subgroups take their turn on the per-digit counters instead.
// SCATTER_STAGED 1: a block is first reordered by digit in shared memory and then written out in
// that order, so that neighbouring invocations write neighbouring addresses (runs of equal digits)
// instead of 256 scattered places. Shared arrays have sizes fixed at compile time (MoltenVK's
// Metal translation cannot size threadgroup arrays by specialization constants), hence two
// modules; the host picks the one that fits the device's shared memory.
// Nothing assumes a subgroup size: lanes map to keys by gl_SubgroupID * gl_SubgroupSize +
// gl_SubgroupInvocationID (lavapipe 8 lanes, NVIDIA and Apple 32).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "gs_common.glsl"

layout(local_size_x = GS_SORT_WG) in;
layout(constant_id = GS_SPEC_SCATTER_BALLOT) const uint BALLOT = 0;
layout(constant_id = GS_SPEC_SUBGROUPS) const uint NUM_SG = 32;

layout(std430, binding = 0) readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) readonly buffer ValsIn { uint vals_in[]; };
layout(std430, binding = 2) writeonly buffer KeysOut { uint keys_out[]; };
layout(std430, binding = 3) writeonly buffer ValsOut { uint vals_out[]; };
layout(std430, binding = 4) readonly buffer Hist { uint hist[]; };
layout(std430, binding = 5) readonly buffer Counters { uint counters[]; };
layout(std430, binding = 6) readonly buffer Totals { uint totals[]; };
layout(push_constant, std430) uniform PC { gs_pc_sort pc; };

#include "sort_common.glsl"

#define SCRATCH_WORDS (TABLE_ROWS * (GS_RADIX / 2) > GS_SORT_WG ? TABLE_ROWS * (GS_RADIX / 2) : GS_SORT_WG)
shared uint s_base[2 * GS_RADIX];     // ping-pong: the chunk's bases, then the next chunk's
shared uint s_gl[GS_RADIX];           // staged: global minus local base per digit
shared uint s_scratch[SCRATCH_WORDS]; // serial: the chunk's digits; ballot: the subgroup table
#if SCATTER_STAGED
shared uint s_sk[2 * GS_SORT_BLOCK];  // staged keys
shared uint s_sv[GS_SORT_BLOCK];      // staged values
#endif

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint n = sort_count(pc.n, pc.count_index, pc.capacity);
  uint lane = BALLOT != 0u ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : tid;
  bool table = BALLOT != 0u && gl_NumSubgroups <= min(NUM_SG, uint(TABLE_ROWS));
  // Where each digit starts in the output: exclusive scan of the digit totals (sort_scan), once
  // per workgroup; invocation tid owns digit tid (GS_RADIX == GS_SORT_WG).
  uint tot = totals[tid];
  s_gl[tid] = tot;
  barrier();
  for (uint off = 1u; off < uint(GS_RADIX); off <<= 1) {
    uint add = tid >= off ? s_gl[tid - off] : 0u;
    barrier();
    s_gl[tid] += add;
    barrier();
  }
  uint digit_start = s_gl[tid] - tot;
  barrier();
  for (uint block = gl_WorkGroupID.x; block < pc.num_blocks; block += gl_NumWorkGroups.x) {
    uint base = block * GS_SORT_BLOCK;
    if (base >= n) break;
    // GS_RADIX == GS_SORT_WG: invocation tid owns digit tid here.
    // hist rows hold inclusive prefixes over the blocks (sort_scan).
    uint h = tid * pc.num_blocks + block;
    uint before = block == 0u ? 0u : hist[h - 1u];
    uint g = digit_start + before;
#if SCATTER_STAGED
    // Local bases: exclusive scan over the digits of this block's digit counts (in the second
    // half of s_base); s_gl keeps global minus local base for the write-out.
    uint cnt = hist[h] - before;
    s_base[GS_RADIX + tid] = cnt;
    barrier();
    for (uint off = 1u; off < uint(GS_RADIX); off <<= 1) {
      uint add = tid >= off ? s_base[GS_RADIX + tid - off] : 0u;
      barrier();
      s_base[GS_RADIX + tid] += add;
      barrier();
    }
    uint l = s_base[GS_RADIX + tid] - cnt;
    s_base[tid] = l;
    s_gl[tid] = g - l;
#else
    s_base[tid] = g;
#endif
    uint par = 0u; // which half of s_base holds this chunk's bases
    barrier();
    for (uint k = 0; k < GS_SORT_ITEMS; k++) {
      uint i = base + k * GS_SORT_WG + lane;
      bool valid = i < n;
      uint digit = valid ? sort_digit(i, pc.shift) : 0xffffffffu;
      uint pos = 0u;
      if (BALLOT == 0u) {
        s_scratch[lane] = digit;
        barrier();
        uint rank = 0u;
        for (uint j = 0u; j < lane; j++) rank += s_scratch[j] == digit ? 1u : 0u;
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
          for (uint w = tid; w < gl_NumSubgroups * (GS_RADIX / 2); w += GS_SORT_WG) s_scratch[w] = 0u;
          barrier();
          uint slot = gl_SubgroupID * (GS_RADIX / 2) + (digit >> 1);
          uint sh = (digit & 1u) * 16u;
          if (valid && rank + 1u == cnt) atomicAdd(s_scratch[slot], cnt << sh);
          barrier();
          // Exclusive scan of each digit's counts over the subgroups; totals give the next bases.
          if (tid < uint(GS_RADIX / 2)) {
            uint r0 = 0u, r1 = 0u;
            for (uint sg = 0u; sg < gl_NumSubgroups; sg++) {
              uint w = s_scratch[sg * (GS_RADIX / 2) + tid];
              s_scratch[sg * (GS_RADIX / 2) + tid] = r0 | (r1 << 16);
              r0 += w & 0xffffu;
              r1 += w >> 16;
            }
            s_base[(par ^ 1u) * GS_RADIX + 2u * tid] = s_base[par * GS_RADIX + 2u * tid] + r0;
            s_base[(par ^ 1u) * GS_RADIX + 2u * tid + 1u] =
                s_base[par * GS_RADIX + 2u * tid + 1u] + r1;
          }
          barrier();
          if (valid) pos = s_base[par * GS_RADIX + digit] + ((s_scratch[slot] >> sh) & 0xffffu) + rank;
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
#if SCATTER_STAGED
        s_sk[2u * pos] = keys_in[2u * i];
        s_sk[2u * pos + 1u] = keys_in[2u * i + 1u];
        s_sv[pos] = vals_in[i];
#else
        keys_out[2u * pos] = keys_in[2u * i];
        keys_out[2u * pos + 1u] = keys_in[2u * i + 1u];
        vals_out[pos] = vals_in[i];
#endif
      }
    }
#if SCATTER_STAGED
    barrier();
    uint count = min(n - base, uint(GS_SORT_BLOCK));
    for (uint j = tid; j < count; j += GS_SORT_WG) {
      uint lo = s_sk[2u * j], hi = s_sk[2u * j + 1u];
      uint d = ((pc.shift < 32u ? lo : hi) >> (pc.shift & 31u)) & uint(GS_RADIX - 1);
      uint gpos = s_gl[d] + j; // global base + (j - local base), modulo 2^32
      keys_out[2u * gpos] = lo;
      keys_out[2u * gpos + 1u] = hi;
      vals_out[gpos] = s_sv[j];
    }
#endif
    barrier();
  }
}

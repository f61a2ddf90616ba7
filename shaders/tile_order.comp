#version 450
// tile_order.comp: for `fwd_order: dense_first`, before the rasterize forward; one workgroup: the
// tiles in the order the forward should start them, those with the most pairs first. A tile's
// workgroup walks its splats one after another, so a dense tile started late ends the frame late
// while the others are long done (longest job first: the list scheduler's classic remedy). The
// order is by the pair count's bucket (its bit length and the next two bits: within 25% of each
// other share a bucket), tiles of a bucket in whatever order the atomics give; each tile appears
// exactly once, and what the forward computes for a tile does not depend on when it runs.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer Ranges { uint ranges[]; };
layout(std430, binding = 1) writeonly buffer Order { uint order[]; };
layout(push_constant, std430) uniform PC { gs_pc_ranges pc; };

const uint BUCKETS = 128u;
shared uint s_count[BUCKETS]; // tiles per bucket, then each bucket's next slot

// Bucket of tile t: 0 for the most pairs, BUCKETS - 1 for none.
uint bucket_of(uint t) {
  uint start = ranges[2u * t], end = ranges[2u * t + 1u];
  uint n = end > start ? end - start : 0u;
  uint key = n; // 0 .. 3 as they are
  if (n >= 4u) {
    uint msb = uint(findMSB(n)); // 2 .. 31
    key = 4u * msb + ((n >> (msb - 2u)) & 3u); // 8 .. 127
  }
  return BUCKETS - 1u - key;
}

void main() {
  uint tid = gl_LocalInvocationIndex;
  if (tid < BUCKETS) s_count[tid] = 0u;
  barrier();
  for (uint t = tid; t < pc.num_tiles; t += GS_WG) atomicAdd(s_count[bucket_of(t)], 1u);
  barrier();
  if (tid == 0u) {
    uint sum = 0u;
    for (uint b = 0u; b < BUCKETS; b++) {
      uint c = s_count[b];
      s_count[b] = sum;
      sum += c;
    }
  }
  barrier();
  for (uint t = tid; t < pc.num_tiles; t += GS_WG) order[atomicAdd(s_count[bucket_of(t)], 1u)] = t;
}

#version 450
// emit_pairs.comp: forward stage 4: every splat writes one (tile, depth) key and its index per
// covered tile, row-major inside its rectangle, from its place in the inclusive scan. Pairs past
// the arena's capacity are dropped; the true total goes to counters[GS_CTR_PAIRS] so the host
// can grow the arena and render the frame again.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 1) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 2) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 3) writeonly buffer Vals { uint vals[]; };
layout(std430, binding = 4) buffer Counters { uint counters[]; };
layout(push_constant, std430) uniform PC { gs_pc_bin pc; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i == 0u) counters[GS_CTR_PAIRS] = pc.n > 0u ? offsets[pc.n - 1u] : 0u;
  if (i >= pc.n) return;
  uint r0 = splats[i].rect[0], r1 = splats[i].rect[1];
  uint x0 = r0 & 0xffffu, y0 = r0 >> 16, x1 = r1 & 0xffffu, y1 = r1 >> 16;
  if (x1 <= x0 || y1 <= y0) return;
  uint idx = i > 0u ? offsets[i - 1u] : 0u;
  uint dbits = floatBitsToUint(splats[i].depth);
  for (uint ty = y0; ty < y1; ty++)
    for (uint tx = x0; tx < x1; tx++) {
      if (idx < pc.capacity) {
        keys[2u * idx] = dbits;
        keys[2u * idx + 1u] = ty * pc.tiles_x + tx;
        vals[idx] = i;
      }
      idx++;
    }
}

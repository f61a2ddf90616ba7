#version 450
// emit_pairs.comp: forward stage 4: every splat writes one (tile, depth) key and its index per
// tile it reaches (the tiles tile_count counted, tile_cull.glsl), row-major, from its place in
// the inclusive scan. Pairs past the arena's capacity are dropped; the true total goes to
// counters[GS_CTR_PAIRS] so the host can grow the arena and render the frame again.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(constant_id = GS_SPEC_TILE_CULL) const uint CULL = 0u;
layout(std430, binding = 0) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 1) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 2) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 3) writeonly buffer Vals { uint vals[]; };
layout(std430, binding = 4) buffer Counters { uint counters[]; };
layout(push_constant, std430) uniform PC { gs_pc_bin pc; };

#include "tile_cull.glsl"

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i == 0u) counters[GS_CTR_PAIRS] = pc.n > 0u ? offsets[pc.n - 1u] : 0u;
  if (i >= pc.n) return;
  gs_splat2d s = splats[i];
  uvec4 r = gs_cull_rect(s);
  if (r.z <= r.x || r.w <= r.y) return;
  uint idx = i > 0u ? offsets[i - 1u] : 0u;
  // Never past this splat's own slots, whatever a row gives (the counts are the same function).
  uint end = min(offsets[i], pc.capacity);
  uint dbits = floatBitsToUint(s.depth);
  for (uint ty = r.y; ty < r.w; ty++) {
    uvec2 span = gs_cull_row(s, r, ty);
    for (uint tx = span.x; tx < span.y; tx++) {
      if (idx < end) {
        keys[2u * idx] = dbits;
        keys[2u * idx + 1u] = ty * pc.tiles_x + tx;
        vals[idx] = i;
      }
      idx++;
    }
  }
}

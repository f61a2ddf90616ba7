#version 450
// emit_pairs.comp: forward stage 4: every splat writes one (tile, depth) key and its index per
// tile it reaches (the tiles tile_count counted, tile_cull.glsl), row-major, from its place in
// the inclusive scan. Pairs past the arena's capacity are dropped; the true total goes to
// counters[GS_CTR_PAIRS] so the host can grow the arena and render the frame again, and an
// overflow raises counters[GS_CTR_STALE] (gs_shared.h) until the host has handled it. With
// `sort: depth_first` invocation j takes the j-th splat front to back (order, offsets in that
// order) and the key is (tile id, 0): the sort then needs the tile id's bits alone.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(constant_id = GS_SPEC_TILE_CULL) const uint CULL = 0u;
layout(constant_id = GS_SPEC_DEPTH_FIRST) const uint DEPTH_FIRST = 0u;
layout(std430, binding = 0) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 1) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 2) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 3) writeonly buffer Vals { uint vals[]; };
layout(std430, binding = 4) buffer Counters { uint counters[]; };
layout(std430, binding = 5) readonly buffer Order { uint order[]; };
layout(push_constant, std430) uniform PC { gs_pc_bin pc; };

#include "tile_cull.glsl"

void main() {
  uint j = gl_GlobalInvocationID.x;
  if (j == 0u) {
    uint total = pc.n > 0u ? offsets[pc.n - 1u] : 0u;
    counters[GS_CTR_PAIRS] = total;
    if (total > pc.capacity) counters[GS_CTR_STALE] = 1u;
  }
  if (j >= pc.n) return;
  uint i = DEPTH_FIRST != 0u ? order[j] : j; // the splat; j: its place in the scan
  gs_splat2d s = splats[i];
  uvec4 r = gs_cull_rect(s);
  if (r.z <= r.x || r.w <= r.y) return;
  uint idx = j > 0u ? offsets[j - 1u] : 0u;
  // Never past this splat's own slots, whatever a row gives (the counts are the same function).
  uint end = min(offsets[j], pc.capacity);
  uint dbits = floatBitsToUint(s.depth);
  for (uint ty = r.y; ty < r.w; ty++) {
    uvec2 span = gs_cull_row(s, r, ty);
    for (uint tx = span.x; tx < span.y; tx++) {
      if (idx < end) {
        uint tile = ty * pc.tiles_x + tx;
        keys[2u * idx] = DEPTH_FIRST != 0u ? tile : dbits;
        keys[2u * idx + 1u] = DEPTH_FIRST != 0u ? 0u : tile;
        vals[idx] = i;
      }
      idx++;
    }
  }
}

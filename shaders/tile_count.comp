#version 450
// tile_count.comp: forward stage 2: the number of tiles each splat reaches (0 when culled): its
// rectangle's, or with `tile_cull: ellipse` the tiles the ellipse meets (tile_cull.glsl), kept in
// tiles_touched and copied into offsets, which the scan then turns in place into each splat's end
// position among the (tile, depth) pairs. With `sort: depth_first` (gs_shared.h) it also writes
// each splat's depth key and index, and the scan's input comes from depth_gather.comp instead.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(constant_id = GS_SPEC_TILE_CULL) const uint CULL = 0u;
layout(constant_id = GS_SPEC_DEPTH_FIRST) const uint DEPTH_FIRST = 0u;
layout(std430, binding = 0) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 1) writeonly buffer Touched { uint tiles_touched[]; };
layout(std430, binding = 2) writeonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 3) writeonly buffer DepthKeys { uint depth_keys[]; };
layout(std430, binding = 4) writeonly buffer DepthVals { uint depth_vals[]; };
layout(push_constant, std430) uniform PC { gs_pc_bin pc; };

#include "tile_cull.glsl"

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  gs_splat2d s = splats[i];
  uvec4 r = gs_cull_rect(s);
  uint count = 0u;
  if (r.z > r.x) {
    for (uint ty = r.y; ty < r.w; ty++) {
      uvec2 span = gs_cull_row(s, r, ty);
      count += span.y - span.x;
    }
  }
  tiles_touched[i] = count;
  if (DEPTH_FIRST != 0u) {
    depth_keys[2u * i] = floatBitsToUint(s.depth);
    depth_keys[2u * i + 1u] = 0u;
    depth_vals[i] = i;
  } else {
    offsets[i] = count;
  }
}

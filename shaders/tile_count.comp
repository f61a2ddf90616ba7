#version 450
// tile_count.comp: forward stage 2: the number of tiles each splat's rectangle covers (0 when
// culled), kept in tiles_touched and copied into offsets, which the scan then turns in place into
// each splat's end position among the (tile, depth) pairs.
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 1) writeonly buffer Touched { uint tiles_touched[]; };
layout(std430, binding = 2) writeonly buffer Offsets { uint offsets[]; };
layout(push_constant, std430) uniform PC { gs_pc_bin pc; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  uint r0 = splats[i].rect[0], r1 = splats[i].rect[1];
  uint w = (r1 & 0xffffu) - (r0 & 0xffffu), h = (r1 >> 16) - (r0 >> 16);
  tiles_touched[i] = w * h;
  offsets[i] = w * h;
}

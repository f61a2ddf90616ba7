#version 450
// depth_gather.comp: `sort: depth_first` (gs_shared.h): the scan's input in depth order, the tile
// count of the j-th splat front to back (order: the splat indices sorted by depth).
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer Order { uint order[]; };
layout(std430, binding = 1) readonly buffer Touched { uint tiles_touched[]; };
layout(std430, binding = 2) writeonly buffer Offsets { uint offsets[]; };
layout(push_constant, std430) uniform PC { gs_pc_bin pc; };

void main() {
  uint j = gl_GlobalInvocationID.x;
  if (j < pc.n) offsets[j] = tiles_touched[order[j]];
}

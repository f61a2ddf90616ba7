#version 450
// tile_ranges.comp: forward stage 6: from the sorted keys, each tile's [start, end) range of pairs
// (ranges cleared to zero before, so a tile without pairs is empty). The tile id is the key's
// high word, or its low word with `sort: depth_first` (gs_shared.h).
#include "gs_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 1) writeonly buffer Ranges { uint ranges[]; };
layout(std430, binding = 2) readonly buffer Counters { uint counters[]; };
layout(push_constant, std430) uniform PC { gs_pc_ranges pc; };
layout(constant_id = GS_SPEC_RANGES_DEPTH_FIRST) const uint DEPTH_FIRST = 0u;
const uint W = DEPTH_FIRST != 0u ? 0u : 1u; // the tile id's word

void main() {
  uint n = min(counters[GS_CTR_PAIRS], counters[GS_CTR_CAPACITY]);
  uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x * GS_WG;
  if (i >= n) return;
  uint tile = keys[2u * i + W];
  if (tile >= pc.num_tiles) return;
  if (i == 0u || keys[2u * (i - 1u) + W] != tile) ranges[2u * tile] = i;
  if (i + 1u == n || keys[2u * (i + 1u) + W] != tile) ranges[2u * tile + 1u] = i + 1u;
}

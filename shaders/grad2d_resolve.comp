// grad2d_resolve.comp: the second half of the deterministic rasterize backward
// (rasterize_bwd_det.comp): each splat's 9 fixed-point sums (two words each, 64-bit two's
// complement) back to the float grad2d the projection backward reads, dividing out fx_scale and
// the conic weights (a, sqrt(a c), c of the splat's conic; see rasterize_bwd.glsl). One thread
// per grad2d float; a 2-D grid, as 9 n threads may exceed one dimension's workgroup limit.
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer Fx { uint fx[]; };
layout(std430, binding = 1) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 2) writeonly buffer Grad2d { float g2[]; };
layout(push_constant) uniform PC { gs_pc_resolve pc; };

void main() {
  uint idx = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * GS_WG +
             gl_LocalInvocationID.x;
  if (idx >= GS_G2D * pc.n) return;
  uint i = idx / GS_G2D, k = idx % GS_G2D;
  uint lo = fx[2u * idx], hi = fx[2u * idx + 1u];
  bool neg = (hi & 0x80000000u) != 0u;
  if (neg) {
    lo = ~lo + 1u;
    hi = ~hi + (lo == 0u ? 1u : 0u);
  }
  float m = float(hi) * 4294967296.0 + float(lo);
  float w = 1.0;
  if (k == uint(GS_G2D_CONIC)) w = splats[i].conic[0];
  if (k == uint(GS_G2D_CONIC + 1)) w = sqrt(splats[i].conic[0] * splats[i].conic[2]);
  if (k == uint(GS_G2D_CONIC + 2)) w = splats[i].conic[2];
  float v = (neg ? -m : m) / pc.fx_scale;
  g2[idx] = (m == 0.0 || !(w > 0.0)) ? 0.0 : v / w;
}

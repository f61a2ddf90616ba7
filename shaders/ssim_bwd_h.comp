// ssim_bwd_h.comp: first pass of the SSIM backward: horizontal blur of the per-pixel loss
// derivatives with respect to the blurred moments (ssim_p -> ssim_q). The window is symmetric and
// padding is zero, so the transpose of the forward blur is the same blur.
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"
#include "ssim_common.glsl"

layout(local_size_x = GS_IMG_WG, local_size_y = GS_IMG_WG) in;
layout(std430, binding = 0) readonly buffer P { float pb[]; };
layout(std430, binding = 1) writeonly buffer Q { float qb[]; };
layout(push_constant) uniform PC { gs_pc_loss pc; };

void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  if (p.x >= pc.width || p.y >= pc.height) return;
  int W = int(pc.width);
  uint row = p.y * pc.width, np = pc.width * pc.height;
  float acc[9] = float[9](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
  for (int k = 0; k < 11; k++) {
    int x = int(p.x) + k - 5;
    if (x < 0 || x >= W) continue;
    uint i = row + uint(x);
    float w = SSIM_W[k];
    for (uint q = 0u; q < 9u; q++) acc[q] += w * pb[ssim_at(9u, np, i, q)];
  }
  for (uint q = 0u; q < 9u; q++) qb[ssim_at(9u, np, row + p.x, q)] = acc[q];
}

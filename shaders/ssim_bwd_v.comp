// ssim_bwd_v.comp: second pass of the SSIM backward: vertical blur of ssim_q, then
// dL/dx = blur(dL/dmu_x) + 2 x blur(dL/dE[x^2]) + y blur(dL/dE[xy]) + (1 - lambda) sign(x - y) / N.
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"
#include "ssim_common.glsl"

layout(local_size_x = GS_IMG_WG, local_size_y = GS_IMG_WG) in;
layout(std430, binding = 0) readonly buffer Img { float img[]; };
layout(std430, binding = 1) readonly buffer Gt { float gt[]; };
layout(std430, binding = 2) readonly buffer Q { float qb[]; };
layout(std430, binding = 3) writeonly buffer Dl { float dl[]; };
layout(push_constant) uniform PC { gs_pc_loss pc; };

void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  if (p.x >= pc.width || p.y >= pc.height) return;
  int H_ = int(pc.height);
  uint np = pc.width * pc.height;
  float acc[9] = float[9](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
  for (int k = 0; k < 11; k++) {
    int y = int(p.y) + k - 5;
    if (y < 0 || y >= H_) continue;
    uint i = uint(y) * pc.width + p.x;
    float w = SSIM_W[k];
    for (uint q = 0u; q < 9u; q++) acc[q] += w * qb[ssim_at(9u, np, i, q)];
  }
  uint pix = p.y * pc.width + p.x;
  float l1w = (1.0 - pc.lambda) * pc.inv_count;
  for (uint c = 0u; c < 3u; c++) {
    float x = img[3u * pix + c], y = gt[3u * pix + c];
    dl[3u * pix + c] = acc[3u * c] + 2.0 * x * acc[3u * c + 1u] + y * acc[3u * c + 2u] +
                       l1w * sign(x - y);
  }
}

// loss_l1.comp: the L1-only loss (lambda_dssim = 0): per pixel dL/dx = sign(x - y) / (3 w h),
// and per workgroup the sum of |x - y| (the host adds the partial sums for the loss value).
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"

layout(local_size_x = GS_IMG_WG, local_size_y = GS_IMG_WG) in;
layout(std430, binding = 0) readonly buffer Img { float img[]; };
layout(std430, binding = 1) readonly buffer Gt { float gt[]; };
layout(std430, binding = 2) writeonly buffer Dl { float dl[]; };
layout(std430, binding = 3) writeonly buffer Part { float part[]; };
layout(push_constant) uniform PC { gs_pc_loss pc; };

shared float red[GS_IMG_WG * GS_IMG_WG];

void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  float s = 0.0;
  if (p.x < pc.width && p.y < pc.height) {
    uint i = 3u * (p.y * pc.width + p.x);
    for (uint c = 0u; c < 3u; c++) {
      float d = img[i + c] - gt[i + c];
      s += abs(d);
      dl[i + c] = sign(d) * pc.inv_count;
    }
  }
  red[gl_LocalInvocationIndex] = s;
  barrier();
  for (uint w = (GS_IMG_WG * GS_IMG_WG) / 2u; w > 0u; w >>= 1) {
    if (gl_LocalInvocationIndex < w) red[gl_LocalInvocationIndex] += red[gl_LocalInvocationIndex + w];
    barrier();
  }
  if (gl_LocalInvocationIndex == 0u) {
    uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    part[2u * g] = red[0];
    part[2u * g + 1u] = 0.0;
  }
}

// loss_ssim.comp: second pass of the SSIM forward and the loss: vertical blur of the moments,
// the SSIM map S per pixel and channel, and the partial derivatives of the loss
// L = (1 - lambda) mean|x - y| + lambda (1 - mean S) with respect to the blurred moments
// mu_x, E[x^2], E[xy] (written to ssim_p; ssim_bwd_* turn them into dL/dx). Per workgroup the sums
// of |x - y| and of S go to loss_part. With GS_SPEC_SSIM_VALID (gsplat's fused-ssim
// padding="valid") the map is only the pixels whose 11x11 window lies inside the image: the others
// add nothing to the sum and get zero derivatives, so the transposed blur of ssim_bwd_* spreads
// gradient only from interior pixels; the mean's divisor is pc.ssim_inv_count either way.
//
// With S = A1 A2 / (B1 B2), A1 = 2 mu_x mu_y + C1, A2 = 2 (E[xy] - mu_x mu_y) + C2,
// B1 = mu_x^2 + mu_y^2 + C1, B2 = E[x^2] - mu_x^2 + E[y^2] - mu_y^2 + C2:
//   dS/dmu_x = (2 mu_y (A2 - A1) - 2 mu_x S (B2 - B1)) / (B1 B2)
//   dS/dE[x^2] = -S / B2,  dS/dE[xy] = 2 A1 / (B1 B2).
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"
#include "ssim_common.glsl"

layout(local_size_x = GS_IMG_WG, local_size_y = GS_IMG_WG) in;
layout(constant_id = GS_SPEC_SSIM_VALID) const uint SSIM_VALID = 0u;
layout(std430, binding = 0) readonly buffer Img { float img[]; };
layout(std430, binding = 1) readonly buffer Gt { float gt[]; };
layout(std430, binding = 2) readonly buffer H { float hb[]; };
layout(std430, binding = 3) writeonly buffer P { float pb[]; };
layout(std430, binding = 4) writeonly buffer Part { float part[]; };
layout(push_constant) uniform PC { gs_pc_loss pc; };

shared vec2 red[GS_IMG_WG * GS_IMG_WG];

void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  vec2 acc = vec2(0.0);
  if (p.x < pc.width && p.y < pc.height) {
    int H_ = int(pc.height);
    uint pix = p.y * pc.width + p.x, np = pc.width * pc.height;
    float kd = -pc.lambda * pc.ssim_inv_count;  // dL/dS for each map entry
    // Window inside the image (padding valid): 5 pixels from every edge.
    bool in_map = SSIM_VALID == 0u || (p.x >= 5u && p.x + 5u < pc.width && p.y >= 5u &&
                                       p.y + 5u < pc.height);
    for (uint c = 0u; c < 3u; c++) {
      acc.x += abs(img[3u * pix + c] - gt[3u * pix + c]);
      if (!in_map) {
        pb[ssim_at(9u, np, pix, 3u * c)] = 0.0;
        pb[ssim_at(9u, np, pix, 3u * c + 1u)] = 0.0;
        pb[ssim_at(9u, np, pix, 3u * c + 2u)] = 0.0;
        continue;
      }
      float mx = 0.0, my = 0.0, xx = 0.0, yy = 0.0, xy = 0.0;
      for (int k = 0; k < 11; k++) {
        int y = int(p.y) + k - 5;
        if (y < 0 || y >= H_) continue;
        uint q = uint(y) * pc.width + p.x;
        float w = SSIM_W[k];
        mx += w * hb[ssim_at(15u, np, q, 5u * c)]; my += w * hb[ssim_at(15u, np, q, 5u * c + 1u)];
        xx += w * hb[ssim_at(15u, np, q, 5u * c + 2u)];
        yy += w * hb[ssim_at(15u, np, q, 5u * c + 3u)];
        xy += w * hb[ssim_at(15u, np, q, 5u * c + 4u)];
      }
      float a1 = 2.0 * mx * my + SSIM_C1;
      float a2 = 2.0 * (xy - mx * my) + SSIM_C2;
      float b1 = mx * mx + my * my + SSIM_C1;
      float b2 = (xx - mx * mx) + (yy - my * my) + SSIM_C2;
      float s, dmu, dxx, dxy;
      if (SSIM_WALK == 2u) {
        // One shared reciprocal for the map and its derivatives (cheaper, rounds differently).
        float r = 1.0 / (b1 * b2);
        s = a1 * a2 * r;
        dmu = (2.0 * my * (a2 - a1) - 2.0 * mx * s * (b2 - b1)) * r;
        dxx = -s * b1 * r;
        dxy = 2.0 * a1 * r;
      } else {
        float den = b1 * b2;
        s = (a1 * a2) / den;
        dmu = (2.0 * my * (a2 - a1) - 2.0 * mx * s * (b2 - b1)) / den;
        dxx = -s / b2;
        dxy = (2.0 * a1) / den;
      }
      acc.y += s;
      pb[ssim_at(9u, np, pix, 3u * c)] = kd * dmu;
      pb[ssim_at(9u, np, pix, 3u * c + 1u)] = kd * dxx;
      pb[ssim_at(9u, np, pix, 3u * c + 2u)] = kd * dxy;
    }
  }
  red[gl_LocalInvocationIndex] = acc;
  barrier();
  for (uint w = (GS_IMG_WG * GS_IMG_WG) / 2u; w > 0u; w >>= 1) {
    if (gl_LocalInvocationIndex < w) red[gl_LocalInvocationIndex] += red[gl_LocalInvocationIndex + w];
    barrier();
  }
  if (gl_LocalInvocationIndex == 0u) {
    uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    part[2u * g] = red[0].x;
    part[2u * g + 1u] = red[0].y;
  }
}

// ssim_h.comp: first pass of the SSIM forward: horizontal blur of the five moments x, y, x^2,
// y^2, x y of every channel (x the render, y the ground truth) into ssim_h (quantity 5 c + q of
// pixel p, at ssim_at(15, ...)).
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"
#include "ssim_common.glsl"

layout(local_size_x = GS_IMG_WG, local_size_y = GS_IMG_WG) in;
layout(std430, binding = 0) readonly buffer Img { float img[]; };
layout(std430, binding = 1) readonly buffer Gt { float gt[]; };
layout(std430, binding = 2) writeonly buffer H { float hb[]; };
layout(push_constant) uniform PC { gs_pc_loss pc; };

void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  if (p.x >= pc.width || p.y >= pc.height) return;
  int W = int(pc.width);
  uint row = p.y * pc.width;
  uint px = row + p.x, np = pc.width * pc.height;
  if (SSIM_WALK == 0u) {
    // One window walk per channel.
    for (uint c = 0u; c < 3u; c++) {
      float mx = 0.0, my = 0.0, xx = 0.0, yy = 0.0, xy = 0.0;
      for (int k = 0; k < 11; k++) {
        int x = int(p.x) + k - 5;
        if (x < 0 || x >= W) continue;
        uint i = 3u * (row + uint(x)) + c;
        float a = img[i], b = gt[i], w = SSIM_W[k];
        mx += w * a; my += w * b; xx += w * (a * a); yy += w * (b * b); xy += w * (a * b);
      }
      hb[ssim_at(15u, np, px, 5u * c)] = mx; hb[ssim_at(15u, np, px, 5u * c + 1u)] = my;
      hb[ssim_at(15u, np, px, 5u * c + 2u)] = xx; hb[ssim_at(15u, np, px, 5u * c + 3u)] = yy;
      hb[ssim_at(15u, np, px, 5u * c + 4u)] = xy;
    }
  } else {
    // All three channels in one walk (same operations per channel, so the same bits).
    vec3 mx = vec3(0.0), my = vec3(0.0), xx = vec3(0.0), yy = vec3(0.0), xy = vec3(0.0);
    for (int k = 0; k < 11; k++) {
      int x = int(p.x) + k - 5;
      if (x < 0 || x >= W) continue;
      uint i = 3u * (row + uint(x));
      vec3 a = vec3(img[i], img[i + 1u], img[i + 2u]);
      vec3 b = vec3(gt[i], gt[i + 1u], gt[i + 2u]);
      float w = SSIM_W[k];
      mx += w * a; my += w * b; xx += w * (a * a); yy += w * (b * b); xy += w * (a * b);
    }
    for (uint c = 0u; c < 3u; c++) {
      hb[ssim_at(15u, np, px, 5u * c)] = mx[c]; hb[ssim_at(15u, np, px, 5u * c + 1u)] = my[c];
      hb[ssim_at(15u, np, px, 5u * c + 2u)] = xx[c]; hb[ssim_at(15u, np, px, 5u * c + 3u)] = yy[c];
      hb[ssim_at(15u, np, px, 5u * c + 4u)] = xy[c];
    }
  }
}

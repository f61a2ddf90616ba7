// rasterize_bwd.glsl: body of the rasterize backward (rasterize_bwd.comp with float atomic add,
// rasterize_bwd_cas.comp with a compare-and-swap loop for devices without it).
//
// One workgroup per 16x16 tile, one thread per pixel. The tile's sorted splats are walked back to
// front in batches staged in shared memory; each pixel starts from its last contributor and
// undoes the front-to-back compositing (T / (1 - alpha)), accumulating the colour behind each
// splat so that dL/dalpha is exact. Per splat, the subgroup sums its lanes' gradients
// (subgroupAdd; the subgroup size is whatever the device has) and one lane (or several, with
// atomic_spread) adds the 9 sums to grad2d with float atomics.
//
// Per pixel and splat, with G = exp(-sigma), alpha = min(0.99, o G), T the transmittance in front
// of the splat, acc the colour behind it normalised by the transmittance behind it:
//   dL/drgb += alpha T dL/dpix
//   dL/dalpha = T dot(rgb - acc, dL/dpix), acc <- rgb alpha + (1 - alpha) acc, acc starting at
//   the background (zero when the 0.99 clamp is active), dL/do = G dL/dalpha, dL/dsigma = -o G dL/dalpha,
//   dL/dmean2d = dL/dsigma (a dx + b dy, c dy + b dx), dL/dconic = dL/dsigma (dx^2/2, dx dy, dy^2/2).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require

#define GS_GLSL 1
#include "gs_train_shared.h"

layout(local_size_x = GS_RASTER_TILE, local_size_y = GS_RASTER_TILE) in;

layout(constant_id = 0) const uint SIGMA_SKIP = 1u;
layout(constant_id = 1) const uint WARP_SKIP = 1u;
layout(constant_id = 2) const uint SPREAD = 0u;
// 1: subgroup sums go to shared memory and each splat's batch total to global memory once per
// workgroup; 0: each subgroup adds its sums to global memory directly (as gsplat does).
layout(constant_id = 3) const uint SHARED_ACC = 1u;

layout(std430, binding = 0) readonly buffer Ranges { uint ranges[]; };
layout(std430, binding = 1) readonly buffer Values { uint values[]; };
layout(std430, binding = 2) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 3) readonly buffer FinalT { float final_t[]; };
layout(std430, binding = 4) readonly buffer Last { uint last[]; };
layout(std430, binding = 5) readonly buffer Dl { float dl[]; };
#ifdef GS_CAS
layout(std430, binding = 6) buffer Grad { uint grad[]; };
shared uint s_grad[GS_RASTER_WG * GS_G2D];
void grad_add(uint i, float v) {
  uint cur = grad[i];
  for (;;) {
    uint prev = atomicCompSwap(grad[i], cur, floatBitsToUint(uintBitsToFloat(cur) + v));
    if (prev == cur) break;
    cur = prev;
  }
}
void shared_add(uint i, float v) {
  uint cur = s_grad[i];
  for (;;) {
    uint prev = atomicCompSwap(s_grad[i], cur, floatBitsToUint(uintBitsToFloat(cur) + v));
    if (prev == cur) break;
    cur = prev;
  }
}
float shared_get(uint i) { return uintBitsToFloat(s_grad[i]); }
void shared_zero(uint i) { s_grad[i] = 0u; }
#else
layout(std430, binding = 6) buffer Grad { float grad[]; };
shared float s_grad[GS_RASTER_WG * GS_G2D];
void grad_add(uint i, float v) { atomicAdd(grad[i], v); }
void shared_add(uint i, float v) { atomicAdd(s_grad[i], v); }
float shared_get(uint i) { return s_grad[i]; }
void shared_zero(uint i) { s_grad[i] = 0.0; }
#endif
layout(push_constant) uniform PC { gs_pc_raster pc; };

shared uint s_id[GS_RASTER_WG];
shared vec2 s_mean[GS_RASTER_WG];
shared vec3 s_conic[GS_RASTER_WG];
shared vec4 s_rgbo[GS_RASTER_WG];
shared uint s_maxlast;

void main() {
  uint tile = gl_WorkGroupID.y * pc.tiles_x + gl_WorkGroupID.x;
  uvec2 pix = gl_GlobalInvocationID.xy;
  bool inside = pix.x < pc.width && pix.y < pc.height;
  uint pidx = inside ? pix.y * pc.width + pix.x : 0u;
  uint start = ranges[2u * tile], end = ranges[2u * tile + 1u];
  uint count = end > start ? end - start : 0u;
  uint tid = gl_LocalInvocationIndex;

  float T = inside ? final_t[pidx] : 1.0;
  uint my_last = inside ? last[pidx] : 0u;
  vec3 dpix = inside ? vec3(dl[3u * pidx], dl[3u * pidx + 1u], dl[3u * pidx + 2u]) : vec3(0.0);
  // Colour of everything behind the current splat, background included, normalised by the
  // transmittance behind it (the background term of dL/dalpha folds into it).
  vec3 acc = vec3(pc.background[0], pc.background[1], pc.background[2]);
  vec2 pc_xy = vec2(pix) + 0.5;

  // Splats behind every pixel's last contributor touch nothing: the walk starts at the tile's
  // largest last contributor (uniform across the workgroup, so barriers stay uniform).
  if (tid == 0u) s_maxlast = 0u;
  barrier();
  uint sg_max = subgroupMax(my_last);
  if (subgroupElect()) atomicMax(s_maxlast, sg_max);
  barrier();
  count = min(count, s_maxlast);

  uint nbatch = (count + GS_RASTER_WG - 1u) / GS_RASTER_WG;
  for (uint b = 0u; b < nbatch; b++) {
    barrier();
    // Stage batch b: positions count-1-b*WG-tid (back to front).
    uint off = b * GS_RASTER_WG + tid;
    if (off < count) {
      uint id = values[start + count - 1u - off];
      s_id[tid] = id;
      s_mean[tid] = vec2(splats[id].mean2d[0], splats[id].mean2d[1]);
      s_conic[tid] = vec3(splats[id].conic[0], splats[id].conic[1], splats[id].conic[2]);
      s_rgbo[tid] = vec4(splats[id].rgb[0], splats[id].rgb[1], splats[id].rgb[2],
                         splats[id].opacity);
    }
    if (SHARED_ACC != 0u)
      for (uint k = 0u; k < GS_G2D; k++) shared_zero(GS_G2D * tid + k);
    barrier();
    uint bsize = min(uint(GS_RASTER_WG), count - b * GS_RASTER_WG);
    for (uint j = 0u; j < bsize; j++) {
      uint pos = count - 1u - (b * GS_RASTER_WG + j);  // position in the tile's range
      bool valid = inside && pos < my_last;
      vec2 d = s_mean[j] - pc_xy;
      vec3 cn = s_conic[j];
      float sigma = 0.5 * (cn.x * d.x * d.x + cn.z * d.y * d.y) + cn.y * d.x * d.y;
      valid = valid && sigma >= 0.0;
      if (SIGMA_SKIP != 0u) valid = valid && sigma < GS_SIGMA_SKIP;
      float G = 0.0, alpha = 0.0, raw = 0.0;
      if (valid) {
        G = exp(-sigma);
        raw = s_rgbo[j].w * G;
        alpha = min(GS_ALPHA_MAX_F, raw);
        valid = alpha >= GS_ALPHA_MIN_F;
      }
      if (WARP_SKIP != 0u && !subgroupAny(valid)) continue;
      float g[9] = float[9](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
      if (valid) {
        T = T / (1.0 - alpha);
        float fac = alpha * T;
        vec3 rgb = s_rgbo[j].xyz;
        g[GS_G2D_RGB] = fac * dpix.x;
        g[GS_G2D_RGB + 1] = fac * dpix.y;
        g[GS_G2D_RGB + 2] = fac * dpix.z;
        float dalpha = dot(rgb - acc, dpix) * T;
        acc = rgb * alpha + (1.0 - alpha) * acc;
        if (raw < GS_ALPHA_MAX_F) {  // where the 0.99 clamp is active alpha is flat
          g[GS_G2D_OPACITY] = G * dalpha;
          float dsig = -s_rgbo[j].w * G * dalpha;
          g[GS_G2D_MEAN] = dsig * (cn.x * d.x + cn.y * d.y);
          g[GS_G2D_MEAN + 1] = dsig * (cn.y * d.x + cn.z * d.y);
          g[GS_G2D_CONIC] = dsig * 0.5 * d.x * d.x;
          g[GS_G2D_CONIC + 1] = dsig * d.x * d.y;
          g[GS_G2D_CONIC + 2] = dsig * 0.5 * d.y * d.y;
        }
      }
      for (int k = 0; k < 9; k++) g[k] = subgroupAdd(g[k]);
      uint base = GS_G2D * j;
      // Without the warp skip, a subgroup with no contributing lane still adds its zero sums
      // (exact: x + 0 = x), which is the cost the skip removes.
      if (SHARED_ACC != 0u) {
        if (SPREAD != 0u) {
          for (uint k = gl_SubgroupInvocationID; k < 9u; k += gl_SubgroupSize) shared_add(base + k, g[k]);
        } else if (subgroupElect()) {
          for (uint k = 0u; k < 9u; k++) shared_add(base + k, g[k]);
        }
      } else {
        uint gb = GS_G2D * s_id[j];
        if (SPREAD != 0u) {
          for (uint k = gl_SubgroupInvocationID; k < 9u; k += gl_SubgroupSize) grad_add(gb + k, g[k]);
        } else if (subgroupElect()) {
          for (uint k = 0u; k < 9u; k++) grad_add(gb + k, g[k]);
        }
      }
    }
    barrier();
    // Flush: each thread adds the sums of the splat it staged (zeros are skipped: x + 0 = x).
    if (SHARED_ACC != 0u && off < count) {
      uint gbase = GS_G2D * s_id[tid];
      for (uint k = 0u; k < GS_G2D; k++) {
        float v = shared_get(GS_G2D * tid + k);
        if (v != 0.0) grad_add(gbase + k, v);
      }
    }
  }
}

// rasterize_bwd.glsl: body of the rasterize backward (rasterize_bwd.comp with float atomic add,
// rasterize_bwd_cas.comp with a compare-and-swap loop for devices without it, and
// rasterize_bwd_det.comp, the deterministic build: 64-bit fixed-point sums, see below).
//
// One workgroup per 16x16 tile, one thread per two pixels (rows y and y + 8): the subgroup
// reductions, the costly part, are then shared by two pixels. The tile's sorted splats are walked back to
// front in batches staged in shared memory; each pixel starts from its last contributor and
// undoes the front-to-back compositing (T / (1 - alpha)), accumulating the colour behind each
// splat so that dL/dalpha is exact. Per splat, the subgroup sums its lanes' gradients
// (subgroupAdd; the subgroup size is whatever the device has) and one lane (or several, with
// atomic_spread) adds the 9 sums to grad2d with float atomics.
//
// Per pixel and splat, with G = exp(-sigma), alpha = min(alpha_max, o G), T the transmittance in front
// of the splat, acc the colour behind it normalised by the transmittance behind it:
//   dL/drgb += alpha T dL/dpix
//   dL/dalpha = T dot(rgb - acc, dL/dpix), acc <- rgb alpha + (1 - alpha) acc, acc starting at
//   the background (zero when the alpha clamp is active), dL/do = G dL/dalpha, dL/dsigma = -o G dL/dalpha,
//   dL/dmean2d = dL/dsigma (a dx + b dy, c dy + b dx), dL/dconic = dL/dsigma (dx^2/2, dx dy, dy^2/2).
//
// Deterministic build (GS_DET): float additions in whatever order the atomics land make two runs
// differ in the last bits, and training amplifies that. Here every subgroup sum is rounded once
// to a 64-bit two's-complement fixed-point integer, q = round(v w fx_scale), and added to shared
// and global memory as two 32-bit words with an explicit carry (uint atomics exist everywhere;
// integer addition is associative, so the total is exact and independent of the order).
// fx_scale is 2^32 / (1 / (3 w h)): 32 fraction bits below the loss's per-pixel unit, so the
// resolution does not depend on the image size. w is 1 for the 2D mean, colour and opacity and
// the conic itself for the conic terms (a, sqrt(a c), c): dL/dconic grows with the splat's area
// while w dL/dconic does not, so one scale fits every splat. grad2d_resolve.comp turns the sums
// back into floats (divides by fx_scale and w). Each rounded term is clamped to 2^52, far
// beyond any real sum (2^20 per-pixel units from one subgroup), so nothing can overflow.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require

#define GS_GLSL 1
#include "gs_train_shared.h"

#define BWD_ROWS (GS_RASTER_TILE / 2)
#define BWD_WG (GS_RASTER_TILE * BWD_ROWS)
layout(local_size_x = GS_RASTER_TILE, local_size_y = BWD_ROWS) in;

layout(constant_id = 0) const uint SIGMA_SKIP = 1u;
layout(constant_id = 1) const uint WARP_SKIP = 1u;
layout(constant_id = 2) const uint SPREAD = 0u;
// 1: subgroup sums go to shared memory and each splat's batch total to global memory once per
// workgroup; 0: each subgroup adds its sums to global memory directly (as gsplat does).
layout(constant_id = 3) const uint SHARED_ACC = 1u;
// The alpha clamp: the forward's GS_SPEC_ALPHA_MAX value (the host builds both from one option).
layout(constant_id = 4) const float ALPHA_MAX = GS_ALPHA_MAX_F;

layout(std430, binding = 0) readonly buffer Ranges { uint ranges[]; };
layout(std430, binding = 1) readonly buffer Values { uint values[]; };
layout(std430, binding = 2) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 3) readonly buffer FinalT { float final_t[]; };
layout(std430, binding = 4) readonly buffer Last { uint last[]; };
layout(std430, binding = 5) readonly buffer Dl { float dl[]; };
#define GS_GRAD_BINDING 6
#include "grad2d_add.glsl"
#if defined(GS_DET)
// s_grad: two words per staged splat's grad2d float.
shared uint s_grad[BWD_WG * GS_G2D * 2];
void shared_add_fx(uint i, uvec2 v) {
  if ((v.x | v.y) == 0u) return;
  uint old = atomicAdd(s_grad[2u * i], v.x);
  uint hi = v.y + (old + v.x < old ? 1u : 0u);
  if (hi != 0u) atomicAdd(s_grad[2u * i + 1u], hi);
}
void shared_add(uint i, float v) { shared_add_fx(i, fx_encode(v)); }
void shared_zero(uint i) {
  s_grad[2u * i] = 0u;
  s_grad[2u * i + 1u] = 0u;
}
#elif defined(GS_CAS)
shared uint s_grad[BWD_WG * GS_G2D];
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
shared float s_grad[BWD_WG * GS_G2D];
void shared_add(uint i, float v) { atomicAdd(s_grad[i], v); }
float shared_get(uint i) { return s_grad[i]; }
void shared_zero(uint i) { s_grad[i] = 0.0; }
#endif
layout(push_constant) uniform PC { gs_pc_raster pc; };

shared uint s_id[BWD_WG];
shared vec2 s_mean[BWD_WG];
shared vec3 s_conic[BWD_WG];
shared vec4 s_rgbo[BWD_WG];
shared uint s_maxlast;

// g[k] for a lane-dependent k without indexing the array dynamically (which would move it to
// local memory).
float pick(float g[9], uint k) {
  float v = g[0];
  for (uint i = 1u; i < 9u; i++) v = k == i ? g[i] : v;
  return v;
}

void main() {
  uint tile = gl_WorkGroupID.y * pc.tiles_x + gl_WorkGroupID.x;
  uint tid = gl_LocalInvocationIndex;
  uint start = ranges[2u * tile], end = ranges[2u * tile + 1u];
  uint count = end > start ? end - start : 0u;

  // The two pixels of this thread and their state. T: transmittance in front of the current
  // splat; acc: colour of everything behind it, background included, normalised by the
  // transmittance behind it (the background term of dL/dalpha folds into it).
  bool inside[2];
  uint my_last[2];
  float T[2];
  vec3 dpix[2], acc[2];
  vec2 pxy[2];
  vec3 bg = vec3(pc.background[0], pc.background[1], pc.background[2]);
  for (int q = 0; q < 2; q++) {
    uvec2 pix = uvec2(gl_WorkGroupID.x * GS_RASTER_TILE + gl_LocalInvocationID.x,
                      gl_WorkGroupID.y * GS_RASTER_TILE + gl_LocalInvocationID.y + uint(q) * BWD_ROWS);
    inside[q] = pix.x < pc.width && pix.y < pc.height;
    uint pidx = inside[q] ? pix.y * pc.width + pix.x : 0u;
    T[q] = inside[q] ? final_t[pidx] : 1.0;
    my_last[q] = inside[q] ? last[pidx] : 0u;
    dpix[q] = inside[q] ? vec3(dl[3u * pidx], dl[3u * pidx + 1u], dl[3u * pidx + 2u]) : vec3(0.0);
    acc[q] = bg;
    pxy[q] = vec2(pix) + 0.5;
  }

  // Splats behind every pixel's last contributor touch nothing: the walk starts at the tile's
  // largest last contributor (uniform across the workgroup, so barriers stay uniform).
  if (tid == 0u) s_maxlast = 0u;
  barrier();
  uint sg_max = subgroupMax(max(my_last[0], my_last[1]));
  if (subgroupElect()) atomicMax(s_maxlast, sg_max);
  barrier();
  count = min(count, s_maxlast);

  uint nbatch = (count + BWD_WG - 1u) / BWD_WG;
  for (uint b = 0u; b < nbatch; b++) {
    barrier();
    // Stage batch b: positions count-1-b*WG-tid (back to front).
    uint off = b * BWD_WG + tid;
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
    uint bsize = min(uint(BWD_WG), count - b * BWD_WG);
    for (uint j = 0u; j < bsize; j++) {
      uint pos = count - 1u - (b * BWD_WG + j);  // position in the tile's range
      vec2 mean = s_mean[j];
      vec3 cn = s_conic[j];
      vec4 rgbo = s_rgbo[j];
      float g[9] = float[9](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
      bool any_valid = false;
      for (int q = 0; q < 2; q++) {
        bool valid = inside[q] && pos < my_last[q];
        vec2 d = mean - pxy[q];
        float sigma = 0.5 * (cn.x * d.x * d.x + cn.z * d.y * d.y) + cn.y * d.x * d.y;
        valid = valid && sigma >= 0.0;
        if (SIGMA_SKIP != 0u) valid = valid && sigma < GS_SIGMA_SKIP;
        float G = 0.0, alpha = 0.0, raw = 0.0;
        if (valid) {
          G = exp(-sigma);
          raw = rgbo.w * G;
          alpha = min(ALPHA_MAX, raw);
          valid = alpha >= GS_ALPHA_MIN_F;
        }
        if (valid) {
          any_valid = true;
          T[q] = T[q] / (1.0 - alpha);
          float fac = alpha * T[q];
          g[GS_G2D_RGB] += fac * dpix[q].x;
          g[GS_G2D_RGB + 1] += fac * dpix[q].y;
          g[GS_G2D_RGB + 2] += fac * dpix[q].z;
          float dalpha = dot(rgbo.xyz - acc[q], dpix[q]) * T[q];
          acc[q] = rgbo.xyz * alpha + (1.0 - alpha) * acc[q];
          if (raw < ALPHA_MAX) add_alpha_grad(g, G, dalpha, rgbo.w, cn, d);
        }
      }
      // Without the warp skip, a subgroup with no contributing lane still reduces and adds its
      // zero sums (exact: x + 0 = x), which is the cost the skip removes.
      if (WARP_SKIP != 0u && !subgroupAny(any_valid)) continue;
      for (int k = 0; k < 9; k++) g[k] = subgroupAdd(g[k]);
#ifdef GS_DET
      fx_weigh(g, pc.fx_scale, cn);
#endif
      if (SHARED_ACC != 0u) {
        uint base = GS_G2D * j;
        if (SPREAD != 0u) {
          for (uint k = gl_SubgroupInvocationID; k < 9u; k += gl_SubgroupSize)
            shared_add(base + k, pick(g, k));
        } else if (subgroupElect()) {
          for (uint k = 0u; k < 9u; k++) shared_add(base + k, g[k]);
        }
      } else {
        uint gb = GS_G2D * s_id[j];
        if (SPREAD != 0u) {
          for (uint k = gl_SubgroupInvocationID; k < 9u; k += gl_SubgroupSize)
            grad_add(gb + k, pick(g, k));
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
#ifdef GS_DET
        uint w = 2u * (GS_G2D * tid + k);
        grad_add_fx(gbase + k, uvec2(s_grad[w], s_grad[w + 1u]));
#else
        float v = shared_get(GS_G2D * tid + k);
        if (v != 0.0) grad_add(gbase + k, v);
#endif
      }
    }
  }
}

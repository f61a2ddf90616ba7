// grad2d_add.glsl: what the two rasterize backward kernels (rasterize_bwd.glsl,
// rasterize_bwd_splat.glsl) share: the global grad2d sums, the buffer at binding GS_GRAD_BINDING
// and grad_add(i, v), in one of three builds: float atomic add (default), a compare-and-swap loop
// (GS_CAS, devices without float atomics) or 64-bit fixed point (GS_DET, deterministic: see
// rasterize_bwd.glsl's header; grad2d_resolve.comp turns the sums back into floats); the
// opacity, 2D mean and conic terms of one (splat, pixel) pair (add_alpha_grad); and, in the
// deterministic build, the weights of the fixed-point units (fx_weigh).
#if defined(GS_DET)
// grad: two words (lo, hi) per grad2d float.
layout(std430, binding = GS_GRAD_BINDING) buffer Grad { uint grad[]; };
const float FX_MAX = 4503599627370496.0; // 2^52
const float FX_WORD = 4294967296.0;      // 2^32
// round(x) as (lo, hi) of a 64-bit two's-complement integer, |x| clamped to 2^52. The split is
// exact: x rounded has 24 significant bits, so x - hi 2^32 is representable.
uvec2 fx_encode(float x) {
  float a = abs(x);
  a = a < FX_MAX ? roundEven(a) : FX_MAX; // NaN lands on the clamp too
  float h = floor(a * (1.0 / FX_WORD));
  uint hi = uint(h), lo = uint(a - h * FX_WORD);
  if (x < 0.0) {
    lo = ~lo + 1u;
    hi = ~hi + (lo == 0u ? 1u : 0u);
  }
  return uvec2(lo, hi);
}
void grad_add_fx(uint i, uvec2 v) {
  if ((v.x | v.y) == 0u) return;
  uint old = atomicAdd(grad[2u * i], v.x);
  uint hi = v.y + (old + v.x < old ? 1u : 0u); // carry out of the low word
  if (hi != 0u) atomicAdd(grad[2u * i + 1u], hi);
}
void grad_add(uint i, float v) { grad_add_fx(i, fx_encode(v)); }
#elif defined(GS_CAS)
layout(std430, binding = GS_GRAD_BINDING) buffer Grad { uint grad[]; };
void grad_add(uint i, float v) {
  uint cur = grad[i];
  for (;;) {
    uint prev = atomicCompSwap(grad[i], cur, floatBitsToUint(uintBitsToFloat(cur) + v));
    if (prev == cur) break;
    cur = prev;
  }
}
#else
layout(std430, binding = GS_GRAD_BINDING) buffer Grad { float grad[]; };
void grad_add(uint i, float v) { atomicAdd(grad[i], v); }
#endif

// dL/dalpha of one (splat, pixel) pair into a splat's 9 sums g (the GS_G2D_* layout): G =
// exp(-sigma), o the opacity, cn the conic, d = mean - pixel centre. Only where the alpha clamp
// is inactive (o G < alpha_max): a clamped alpha is flat.
void add_alpha_grad(inout float g[9], float G, float dalpha, float o, vec3 cn, vec2 d) {
  g[GS_G2D_OPACITY] += G * dalpha;
  float dsig = -o * G * dalpha;
  g[GS_G2D_MEAN] += dsig * (cn.x * d.x + cn.y * d.y);
  g[GS_G2D_MEAN + 1] += dsig * (cn.y * d.x + cn.z * d.y);
  g[GS_G2D_CONIC] += dsig * 0.5 * d.x * d.x;
  g[GS_G2D_CONIC + 1] += dsig * d.x * d.y;
  g[GS_G2D_CONIC + 2] += dsig * 0.5 * d.y * d.y;
}

#if defined(GS_DET)
// A splat's sums into fixed-point units: fx_scale, and the conic terms times a, sqrt(a c), c of
// its conic (rasterize_bwd.glsl's header; grad2d_resolve.comp divides them out).
void fx_weigh(inout float g[9], float fx_scale, vec3 cn) {
  for (int k = 0; k < 9; k++) g[k] *= fx_scale;
  g[GS_G2D_CONIC] *= cn.x;
  g[GS_G2D_CONIC + 1] *= sqrt(cn.x * cn.z);
  g[GS_G2D_CONIC + 2] *= cn.z;
}
#endif

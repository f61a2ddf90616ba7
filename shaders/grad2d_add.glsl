// grad2d_add.glsl: the global grad2d sums of the rasterize backward kernels (rasterize_bwd.glsl,
// rasterize_bwd_splat.glsl): the buffer at binding GS_GRAD_BINDING and grad_add(i, v), in one of
// three builds: float atomic add (default), a compare-and-swap loop (GS_CAS, devices without
// float atomics) or 64-bit fixed point (GS_DET, deterministic: see rasterize_bwd.glsl's header;
// grad2d_resolve.comp turns the sums back into floats).
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

// rasterize_bwd_cas.comp: rasterize backward for devices without float atomic add: the per-splat
// sums are added with a 32-bit compare-and-swap loop. The body is rasterize_bwd.glsl.
#version 450
#define GS_CAS 1
#include "rasterize_bwd.glsl"

// rasterize_bwd_splat_cas.comp: the per-splat rasterize backward with a compare-and-swap loop
// (devices without float atomic add); the body is rasterize_bwd_splat.glsl.
#version 450
#define GS_CAS 1
#include "rasterize_bwd_splat.glsl"

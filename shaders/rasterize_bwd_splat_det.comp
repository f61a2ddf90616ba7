// rasterize_bwd_splat_det.comp: the deterministic per-splat rasterize backward (`deterministic:
// on`): 64-bit fixed-point sums, resolved by grad2d_resolve.comp; the body is
// rasterize_bwd_splat.glsl.
#version 450
#define GS_DET 1
#include "rasterize_bwd_splat.glsl"

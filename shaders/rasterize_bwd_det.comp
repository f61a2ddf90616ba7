// rasterize_bwd_det.comp: the deterministic rasterize backward (`deterministic: true`): per-splat
// sums in 64-bit fixed point with 32-bit integer atomics, so a run repeats bit for bit; the body
// is rasterize_bwd.glsl, grad2d_resolve.comp turns the sums back into floats.
#version 450
#define GS_DET 1
#include "rasterize_bwd.glsl"

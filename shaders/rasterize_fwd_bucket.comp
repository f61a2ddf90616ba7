#version 450
// rasterize_fwd_bucket.comp: forward stage 7 for the per-splat backward (`rasterize_bwd: splat`):
// the image as rasterize_fwd.comp, plus the runs' compositing state; the body is
// rasterize_fwd.glsl.
#define GS_BUCKETS 1
#include "rasterize_fwd.glsl"

#version 450
// rasterize_fwd.comp: forward stage 7, the image alone; the body is rasterize_fwd.glsl.
#include "rasterize_fwd.glsl"

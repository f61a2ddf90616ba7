// rasterize_bwd_splat.comp: the per-splat rasterize backward with float atomic add
// (GL_EXT_shader_atomic_float); the body is rasterize_bwd_splat.glsl.
#version 450
#extension GL_EXT_shader_atomic_float : require
#include "rasterize_bwd_splat.glsl"

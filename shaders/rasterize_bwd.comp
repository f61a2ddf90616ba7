// rasterize_bwd.comp: rasterize backward with float atomic add (GL_EXT_shader_atomic_float);
// the body is rasterize_bwd.glsl.
#version 450
#extension GL_EXT_shader_atomic_float : require
#include "rasterize_bwd.glsl"

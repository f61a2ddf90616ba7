// project_bwd.comp: the projection backward, writing the parameter gradients for adam.comp; the
// body is project_bwd.glsl.
#version 450
#include "project_bwd.glsl"

// project_bwd_adam.comp: the projection backward fused with the Adam step (`project_adam:
// fused`): each workgroup applies Adam to its splats from the gradients it keeps in shared
// memory; the body is project_bwd.glsl.
#version 450
#define GS_FUSE_ADAM 1
#include "project_bwd.glsl"

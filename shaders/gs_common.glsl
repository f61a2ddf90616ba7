// gs_common.glsl: included first by every kernel: enables the extensions the pipeline relies on and
// pulls in the C/GLSL shared layouts (gs_shared.h) with GS_GLSL defined.
#extension GL_GOOGLE_include_directive : require
#define GS_GLSL 1
#include "gs_shared.h"

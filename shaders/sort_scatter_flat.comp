#version 450
// sort_scatter_flat.comp: the radix sort scatter writing straight to global memory, for devices
// with less shared memory than the staged module needs (see sort_scatter.glsl). Table of 32 rows:
// subgroups of 8 lanes and more (lavapipe) use the table.
#define SCATTER_STAGED 0
#define TABLE_ROWS 32
#include "sort_scatter.glsl"

#version 450
// sort_scatter.comp: the radix sort scatter with blocks staged in shared memory (31 KiB of it;
// see sort_scatter.glsl). Table of 8 rows: subgroups of 32 lanes (NVIDIA, Apple) use the table.
#define SCATTER_STAGED 1
#define TABLE_ROWS 8
#include "sort_scatter.glsl"

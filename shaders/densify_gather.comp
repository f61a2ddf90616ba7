// densify_gather.comp: applies a densification plan (pipeline/gs_train_densify.h) on the GPU:
// new splat k is a copy of old splat src[k] (parameters, and moments for survivors; zero moments
// for clones and split children), children moved by their sampled offset with scales / 1.6, and,
// entries flagged GS_PLAN_OPACITY taking their opacity logit from off[3 k] (a clone sharing its
// parent's opacity), and with the reset flag, opacities capped at logit(0.01) with zero opacity
// moments. The old and new
// parameter sets are different buffers (one splat may feed several new ones). One thread per new
// splat; it runs every densify_every iterations, so it favours simplicity over coalescing.
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer O0 { float o_means[]; };
layout(std430, binding = 1) readonly buffer O1 { float o_scales[]; };
layout(std430, binding = 2) readonly buffer O2 { float o_quats[]; };
layout(std430, binding = 3) readonly buffer O3 { float o_opacity[]; };
layout(std430, binding = 4) readonly buffer O4 { float o_sh[]; };
layout(std430, binding = 5) writeonly buffer N0 { float n_means[]; };
layout(std430, binding = 6) writeonly buffer N1 { float n_scales[]; };
layout(std430, binding = 7) writeonly buffer N2 { float n_quats[]; };
layout(std430, binding = 8) writeonly buffer N3 { float n_opacity[]; };
layout(std430, binding = 9) writeonly buffer N4 { float n_sh[]; };
layout(std430, binding = 10) readonly buffer OM { vec2 o_mom[]; };
layout(std430, binding = 11) writeonly buffer NM { vec2 n_mom[]; };
layout(std430, binding = 12) readonly buffer Src { uint src[]; };
layout(std430, binding = 13) readonly buffer Off { float off[]; };
layout(push_constant) uniform PC { gs_pc_densify pc; };

// Moments of `per` floats per splat of group g: new splat k from old splat s.
void moments(uint g, uint per, uint k, uint s, bool keep) {
  for (uint j = 0u; j < per; j++) {
    vec2 v = keep ? o_mom[pc.old_off[g] / 2u + per * s + j] : vec2(0.0);
    n_mom[pc.new_off[g] / 2u + per * k + j] = v;
  }
}

void main() {
  uint k = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * GS_WG +
           gl_LocalInvocationID.x;
  if (k >= pc.n_new) return;
  uint e = src[k];
  uint s = e & GS_PLAN_INDEX_MASK, kind = e >> GS_PLAN_KIND_SHIFT;
  bool child = kind == 2u, keep = kind == 0u;
  for (uint a = 0u; a < 3u; a++) {
    n_means[3u * k + a] = o_means[3u * s + a] + (child ? off[3u * k + a] : 0.0);
    n_scales[3u * k + a] = o_scales[3u * s + a] - (child ? pc.ln16 : 0.0);
  }
  for (uint a = 0u; a < 4u; a++) n_quats[4u * k + a] = o_quats[4u * s + a];
  float op = (e & GS_PLAN_OPACITY) != 0u ? off[3u * k] : o_opacity[s];
  n_opacity[k] = pc.reset != 0u ? min(op, pc.opacity_cap) : op;
  for (uint a = 0u; a < 48u; a++) n_sh[48u * k + a] = o_sh[48u * s + a];
  moments(0u, 3u, k, s, keep);
  moments(1u, 3u, k, s, keep);
  moments(2u, 4u, k, s, keep);
  moments(3u, 1u, k, s, keep && pc.reset == 0u);
  moments(4u, 48u, k, s, keep);
}

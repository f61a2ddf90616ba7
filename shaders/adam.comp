// adam.comp: one Adam step (PyTorch form, bias-corrected; as gs_ref_adam_step) over every
// parameter float of the model, one thread per float over the concatenation of the groups
// means (3n), log_scales (3n), quats (4n), opacity (n), sh (48n; coefficient 0 at the dc rate,
// 1..15 at the rest rate). Moments are (m, v) interleaved per float. With ADAM_VISIBLE, splats
// that were culled this iteration (tiles_touched 0: no gradient) keep their parameters and
// moments, as in gsplat's visible Adam. The grid is 2-D because 59 n threads exceed the 65535
// workgroup limit of one dimension for large n.
#version 450
#define GS_GLSL 1
#include "gs_train_shared.h"
#include "adam_common.glsl"

layout(local_size_x = GS_WG) in;
layout(constant_id = 0) const uint ADAM_VISIBLE = 0u;

layout(std430, binding = 0) buffer P0 { float p_means[]; };
layout(std430, binding = 1) buffer P1 { float p_scales[]; };
layout(std430, binding = 2) buffer P2 { float p_quats[]; };
layout(std430, binding = 3) buffer P3 { float p_opacity[]; };
layout(std430, binding = 4) buffer P4 { float p_sh[]; };
layout(std430, binding = 5) readonly buffer G0 { float g_means[]; };
layout(std430, binding = 6) readonly buffer G1 { float g_scales[]; };
layout(std430, binding = 7) readonly buffer G2 { float g_quats[]; };
layout(std430, binding = 8) readonly buffer G3 { float g_opacity[]; };
layout(std430, binding = 9) readonly buffer G4 { float g_sh[]; };
layout(std430, binding = 10) buffer Mom { vec2 mom[]; };
layout(std430, binding = 11) readonly buffer Vis { uint tiles_touched[]; };
layout(std430, binding = 12) readonly buffer Ctr { uint counters[]; };
layout(push_constant) uniform PC { gs_pc_adam pc; };

// Returns the parameter's change; updates the moments in place.
float adam(inout vec2 mv, float g, float step_size) {
  return adam_update(mv, g, step_size, pc.beta1, pc.beta2, pc.eps, pc.sqrt_bc2);
}

bool skip(uint splat) { return ADAM_VISIBLE != 0u && tiles_touched[splat] == 0u; }

void main() {
  uint idx = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * GS_WG +
             gl_LocalInvocationID.x;
  uint n = pc.n;
  if (counters[GS_CTR_PAIRS] > counters[GS_CTR_CAPACITY] || counters[GS_CTR_STALE] != 0u)
    return;
  if (idx < 3u * n) {
    if (skip(idx / 3u)) return;
    vec2 mv = mom[pc.mom_off[0] / 2u + idx];
    p_means[idx] -= adam(mv, g_means[idx], pc.step_size[0]);
    mom[pc.mom_off[0] / 2u + idx] = mv;
    return;
  }
  idx -= 3u * n;
  if (idx < 3u * n) {
    if (skip(idx / 3u)) return;
    vec2 mv = mom[pc.mom_off[1] / 2u + idx];
    p_scales[idx] -= adam(mv, g_scales[idx], pc.step_size[1]);
    mom[pc.mom_off[1] / 2u + idx] = mv;
    return;
  }
  idx -= 3u * n;
  if (idx < 4u * n) {
    if (skip(idx / 4u)) return;
    vec2 mv = mom[pc.mom_off[2] / 2u + idx];
    p_quats[idx] -= adam(mv, g_quats[idx], pc.step_size[2]);
    mom[pc.mom_off[2] / 2u + idx] = mv;
    return;
  }
  idx -= 4u * n;
  if (idx < n) {
    if (skip(idx)) return;
    vec2 mv = mom[pc.mom_off[3] / 2u + idx];
    p_opacity[idx] -= adam(mv, g_opacity[idx], pc.step_size[3]);
    mom[pc.mom_off[3] / 2u + idx] = mv;
    return;
  }
  idx -= n;
  if (idx < 48u * n) {
    if (skip(idx / 48u)) return;
    vec2 mv = mom[pc.mom_off[4] / 2u + idx];
    p_sh[idx] -= adam(mv, g_sh[idx], (idx % 48u) < 3u ? pc.step_size[4] : pc.step_size[5]);
    mom[pc.mom_off[4] / 2u + idx] = mv;
  }
}

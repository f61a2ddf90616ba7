// project_bwd.glsl: body of the projection backward, one thread per splat: from the per-splat
// gradients of rasterize backward (2D mean, conic, colour, opacity) to the model's parameters: means
// (through the 2D mean, the EWA Jacobian and the SH view direction), log-scales, quaternions
// (through the normalisation), opacity logit (through the sigmoid) and SH coefficients up to the
// active degree (higher ones get zero: degree masking while SH is being unlocked). Culled splats
// get zero. The math is the C reference's (pipeline/gs_ref_tmpl.c), written out in the same order.
// While densification statistics are collected (pc.accumulate), a visible splat adds its 2D
// gradient norm sqrt((g.x w/2)^2 + (g.y h/2)^2), one visibility and its radius (max) to dens;
// with pc.count_radii the norm and the visibility only where gsplat's radii > 0.
//
// Two builds: project_bwd.comp writes the gradients to the grads buffers (model layout) for
// adam.comp; project_bwd_adam.comp (GS_FUSE_ADAM, `project_adam: fused`) keeps each workgroup's
// gradients in shared memory and applies the Adam step to the workgroup's splats itself, with
// adam.comp's arithmetic (adam_common.glsl): the same parameters and moments to the bit, without
// writing 59 gradient floats per splat and reading them back (a quarter of the bytes the two
// kernels move). Its Adam constants (struct gs_pc_adam) come in a buffer, since both blocks
// would exceed the 128 bytes of push constants every device has.
#define GS_GLSL 1
#include "gs_train_shared.h"
#include "sh_common.glsl"
#include "proj_common.glsl"

layout(local_size_x = GS_PB_WG) in;
#ifdef GS_FUSE_ADAM
#include "adam_common.glsl"
#define GS_PARAM_ACCESS
layout(constant_id = 0) const uint ADAM_VISIBLE = 0u; // as adam.comp's
#else
#define GS_PARAM_ACCESS readonly
#endif
layout(std430, binding = 0) GS_PARAM_ACCESS buffer Means { float means[]; };
layout(std430, binding = 1) GS_PARAM_ACCESS buffer Scales { float log_scales[]; };
layout(std430, binding = 2) GS_PARAM_ACCESS buffer Quats { float quats[]; };
layout(std430, binding = 3) GS_PARAM_ACCESS buffer Sh { float sh[]; };
layout(std430, binding = 4) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 5) readonly buffer Grad2d { float g2[]; };
#ifdef GS_FUSE_ADAM
layout(std430, binding = 6) buffer Opac { float p_opacity[]; };
layout(std430, binding = 7) buffer Mom { vec2 mom[]; };
layout(std430, binding = 8) readonly buffer Vis { uint tiles_touched[]; };
layout(std430, binding = 9) readonly buffer AdamPc { gs_pc_adam pa; };
layout(std430, binding = 10) buffer Dens { float dens[]; };
layout(std430, binding = 11) readonly buffer Ctr { uint counters[]; };
#else
layout(std430, binding = 6) writeonly buffer GMeans { float g_means[]; };
layout(std430, binding = 7) writeonly buffer GScales { float g_scales[]; };
layout(std430, binding = 8) writeonly buffer GQuats { float g_quats[]; };
layout(std430, binding = 9) writeonly buffer GOpac { float g_opacity[]; };
layout(std430, binding = 10) writeonly buffer GSh { float g_sh[]; };
layout(std430, binding = 11) buffer Dens { float dens[]; };
layout(std430, binding = 12) readonly buffer Ctr { uint counters[]; };
#endif
layout(push_constant) uniform PC { gs_pc_project_bwd pc; };

// The workgroup's SH coefficients (48 floats per splat) are read and written through shared
// memory with coalesced loads and stores: a thread's own 192 contiguous bytes, read directly,
// would make each warp-wide load touch 32 cache lines. The row stride is odd so that threads
// reading their own rows hit different banks. Fused with Adam, a row also holds the splat's other
// 11 gradients (means, log-scales, quaternion, opacity at the S_* columns): 59 floats.
#ifdef GS_FUSE_ADAM
#define SH_STRIDE 59u
#define S_MEANS 48u
#define S_SCALES 51u
#define S_QUATS 54u
#define S_OPACITY 58u
#else
#define SH_STRIDE 49u
#endif
shared float s_sh[GS_PB_WG * SH_STRIDE];

// Splat i's (local row l) gradient of float k of the means, log-scales, quaternion, opacity: to
// the grads buffers, or to its shared row when Adam follows in this kernel.
#ifdef GS_FUSE_ADAM
void put_means(uint i, uint l, uint k, float v) { s_sh[SH_STRIDE * l + S_MEANS + k] = v; }
void put_scales(uint i, uint l, uint k, float v) { s_sh[SH_STRIDE * l + S_SCALES + k] = v; }
void put_quats(uint i, uint l, uint k, float v) { s_sh[SH_STRIDE * l + S_QUATS + k] = v; }
void put_opacity(uint i, uint l, float v) { s_sh[SH_STRIDE * l + S_OPACITY] = v; }
#else
void put_means(uint i, uint l, uint k, float v) { g_means[3u * i + k] = v; }
void put_scales(uint i, uint l, uint k, float v) { g_scales[3u * i + k] = v; }
void put_quats(uint i, uint l, uint k, float v) { g_quats[4u * i + k] = v; }
void put_opacity(uint i, uint l, float v) { g_opacity[i] = v; }
#endif

void zero(uint i, uint l) {
  for (uint k = 0u; k < 3u; k++) { put_means(i, l, k, 0.0); put_scales(i, l, k, 0.0); }
  for (uint k = 0u; k < 4u; k++) put_quats(i, l, k, 0.0);
  put_opacity(i, l, 0.0);
  for (uint k = 0u; k < 48u; k++) s_sh[SH_STRIDE * l + k] = 0.0;
}

#ifdef GS_FUSE_ADAM
bool adam_skip(uint splat) { return ADAM_VISIBLE != 0u && tiles_touched[splat] == 0u; }

// Adam over the workgroup's floats of one parameter group, one thread per float as adam.comp
// (consecutive threads, consecutive floats): P is the group's parameter buffer, PER its floats
// per splat, COL their first column in a splat's shared row, G its moment group, RATE the step
// size (an expression of the float's index e).
#define GS_ADAM_GROUP(P, PER, COL, G, RATE)                                                        \
  for (uint e = l; e < PER * nb; e += GS_PB_WG) {                                                  \
    uint r = e / PER;                                                                              \
    if (adam_skip(base + r)) continue;                                                             \
    uint idx = PER * base + e, mi = pa.mom_off[G] / 2u + idx;                                     \
    vec2 mv = mom[mi];                                                                             \
    P[idx] -= adam_update(mv, s_sh[SH_STRIDE * r + COL + e % PER], RATE, pa.beta1, pa.beta2,       \
                          pa.eps, pa.sqrt_bc2);                                                    \
    mom[mi] = mv;                                                                                  \
  }
#endif

void splat_bwd(uint i, uint l);

void main() {
  // An overflowed frame, or one submitted behind it, is recorded again: leave everything as it
  // is (uniform: no barrier is skipped by part of the workgroup).
  if (counters[GS_CTR_PAIRS] > counters[GS_CTR_CAPACITY] || counters[GS_CTR_STALE] != 0u)
    return;
  uint l = gl_LocalInvocationID.x;
  // A 2-D grid of workgroups: one dimension is limited to 65535 on common devices.
  uint base = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * GS_PB_WG;
  if (base >= pc.n) return;  // uniform across the workgroup
  uint nb = min(uint(GS_PB_WG), pc.n - base);
  for (uint e = l; e < 48u * nb; e += GS_PB_WG) s_sh[SH_STRIDE * (e / 48u) + e % 48u] = sh[48u * base + e];
  barrier();
  if (l < nb) splat_bwd(base + l, l);
  barrier();
#ifdef GS_FUSE_ADAM
  // Every thread's splat has read its parameters (before the barrier): the step may write them.
  GS_ADAM_GROUP(means, 3u, S_MEANS, 0, pa.step_size[0])
  GS_ADAM_GROUP(log_scales, 3u, S_SCALES, 1, pa.step_size[1])
  GS_ADAM_GROUP(quats, 4u, S_QUATS, 2, pa.step_size[2])
  GS_ADAM_GROUP(p_opacity, 1u, S_OPACITY, 3, pa.step_size[3])
  GS_ADAM_GROUP(sh, 48u, 0u, 4, e % 48u < 3u ? pa.step_size[4] : pa.step_size[5])
#else
  for (uint e = l; e < 48u * nb; e += GS_PB_WG) g_sh[48u * base + e] = s_sh[SH_STRIDE * (e / 48u) + e % 48u];
#endif
}

// gsplat's radii > 0 (the views its densifier counts): opacity at least 1/255, and the
// opacity-aware box, extend = min(3.33, sqrt(2 ln(255 opacity))) standard deviations per axis
// (the region where alpha can reach 1/255), meets the image. project_fwd now bounds splats by the
// same box, so this and the tile rule differ only where a box edge falls exactly on the image's
// edge; the rule stays selectable (`densify_visible`) for results made before.
bool gsplat_visible(gs_splat2d s) {
  if (!(s.opacity >= GS_K_ALPHA_MIN)) return false;
  float extend = min(3.33, sqrt(2.0 * log(s.opacity / GS_K_ALPHA_MIN)));
  float rx = ceil(extend * sqrt(s.cov2d[0])), ry = ceil(extend * sqrt(s.cov2d[2]));
  if (rx <= 0.0 && ry <= 0.0) return false;
  return !(s.mean2d[0] + rx <= 0.0 || s.mean2d[0] - rx >= float(pc.width) ||
           s.mean2d[1] + ry <= 0.0 || s.mean2d[1] - ry >= float(pc.height));
}

// One splat; its SH coefficients are s_sh[SH_STRIDE * l ...], replaced by their gradients.
void splat_bwd(uint i, uint l) {
  if (splats[i].radius == 0u) { zero(i, l); return; }

  // ---- forward quantities (recomputed) ----
  vec3 p = vec3(means[3u * i], means[3u * i + 1u], means[3u * i + 2u]);
  float w[3][3];
  float t[3];
  for (int r = 0; r < 3; r++) {
    t[r] = pc.viewmat[4 * r] * p.x + pc.viewmat[4 * r + 1] * p.y + pc.viewmat[4 * r + 2] * p.z +
           pc.viewmat[4 * r + 3];
    for (int k = 0; k < 3; k++) w[r][k] = pc.viewmat[4 * r + k];
  }
  vec4 qr = vec4(quats[4u * i], quats[4u * i + 1u], quats[4u * i + 2u], quats[4u * i + 3u]);
  float qnorm = sqrt(qr.x * qr.x + qr.y * qr.y + qr.z * qr.z + qr.w * qr.w);
  if (!(t[2] > GS_NEAR_Z_F) || !(qnorm > 0.0)) { zero(i, l); return; }
  float q[4] = float[4](qr.x / qnorm, qr.y / qnorm, qr.z / qnorm, qr.w / qnorm);
  float qw = q[0], qx = q[1], qy = q[2], qz = q[3];
  float rot[3][3];
  rot[0][0] = 1.0 - 2.0 * (qy * qy + qz * qz);
  rot[0][1] = 2.0 * (qx * qy - qw * qz);
  rot[0][2] = 2.0 * (qx * qz + qw * qy);
  rot[1][0] = 2.0 * (qx * qy + qw * qz);
  rot[1][1] = 1.0 - 2.0 * (qx * qx + qz * qz);
  rot[1][2] = 2.0 * (qy * qz - qw * qx);
  rot[2][0] = 2.0 * (qx * qz - qw * qy);
  rot[2][1] = 2.0 * (qy * qz + qw * qx);
  rot[2][2] = 1.0 - 2.0 * (qx * qx + qy * qy);
  float s[3];
  for (int k = 0; k < 3; k++) s[k] = exp(log_scales[3u * i + uint(k)]);
  float m3[3][3], sig[3][3], ws[3][3], cc[3][3];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) m3[r][k] = rot[r][k] * s[k];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      sig[r][k] = m3[r][0] * m3[k][0] + m3[r][1] * m3[k][1] + m3[r][2] * m3[k][2];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      ws[r][k] = w[r][0] * sig[0][k] + w[r][1] * sig[1][k] + w[r][2] * sig[2][k];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      cc[r][k] = ws[r][0] * w[k][0] + ws[r][1] * w[k][1] + ws[r][2] * w[k][2];
  float iz = 1.0 / t[2];
  vec4 tj = gs_jacobian_xy(t[0], t[1], t[2], iz, pc.fx, pc.fy, pc.cx, pc.cy, pc.width, pc.height);
  float j[2][3];
  j[0][0] = pc.fx * iz; j[0][1] = 0.0; j[0][2] = -pc.fx * tj.x * iz * iz;
  j[1][0] = 0.0; j[1][1] = pc.fy * iz; j[1][2] = -pc.fy * tj.y * iz * iz;
  vec3 dv = p - vec3(pc.campos[0], pc.campos[1], pc.campos[2]);
  float vnorm = sqrt(dv.x * dv.x + dv.y * dv.y + dv.z * dv.z);
  vec3 dir = vnorm > 0.0 ? dv / vnorm : vec3(0.0);

  float ga2[9];
  for (uint k = 0u; k < 9u; k++) ga2[k] = g2[GS_G2D * i + k];  // constant indices once unrolled
  vec3 gmean = vec3(0.0);

  // ---- opacity through the sigmoid ----
  float o = splats[i].opacity;
  put_opacity(i, l, ga2[GS_G2D_OPACITY] * o * (1.0 - o));

  // ---- colour: SH coefficients and view direction ----
  float b[16];
  vec3 db[16];
  sh_basis_grad(dir, pc.sh_degree, b, db);
  uint nk = (pc.sh_degree + 1u) * (pc.sh_degree + 1u);
  // Constant loop bounds (the active degree masks inside) keep b[] and db[] in registers; a loop
  // to nk would index them dynamically and put them in local memory.
  uint so = SH_STRIDE * l;
  vec3 col = vec3(0.0);
  for (uint k = 0u; k < 16u; k++)
    if (k < nk) col += b[k] * vec3(s_sh[so + 3u * k], s_sh[so + 3u * k + 1u], s_sh[so + 3u * k + 2u]);
  col += 0.5;
  vec3 gc = vec3(col.x < 0.0 ? 0.0 : ga2[GS_G2D_RGB], col.y < 0.0 ? 0.0 : ga2[GS_G2D_RGB + 1],
                 col.z < 0.0 ? 0.0 : ga2[GS_G2D_RGB + 2]);
  vec3 gdir = vec3(0.0);
  for (uint k = 0u; k < 16u; k++) {
    uint o = so + 3u * k;
    if (k < nk) {
      vec3 shk = vec3(s_sh[o], s_sh[o + 1u], s_sh[o + 2u]);
      s_sh[o] = b[k] * gc.x;
      s_sh[o + 1u] = b[k] * gc.y;
      s_sh[o + 2u] = b[k] * gc.z;
      gdir += (shk.x * gc.x + shk.y * gc.y + shk.z * gc.z) * db[k];
    } else {
      s_sh[o] = 0.0;
      s_sh[o + 1u] = 0.0;
      s_sh[o + 2u] = 0.0;
    }
  }
  if (vnorm > 0.0) {
    float dt = dot(gdir, dir);
    gmean += (gdir - dir * dt) / vnorm;
  }

  // ---- conic -> cov2d ----
  float cn[2][2], gcn[2][2], tmp2[2][2], gcov[2][2];
  cn[0][0] = splats[i].conic[0]; cn[0][1] = splats[i].conic[1];
  cn[1][0] = splats[i].conic[1]; cn[1][1] = splats[i].conic[2];
  gcn[0][0] = ga2[GS_G2D_CONIC]; gcn[0][1] = 0.5 * ga2[GS_G2D_CONIC + 1];
  gcn[1][0] = 0.5 * ga2[GS_G2D_CONIC + 1]; gcn[1][1] = ga2[GS_G2D_CONIC + 2];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 2; k++) tmp2[r][k] = cn[r][0] * gcn[0][k] + cn[r][1] * gcn[1][k];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 2; k++) gcov[r][k] = -(tmp2[r][0] * cn[0][k] + tmp2[r][1] * cn[1][k]);

  // ---- cov2d = J ccam J^T + 0.3 I ----
  float gjt[2][3], gcc[3][3], gj[2][3];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 3; k++) gjt[r][k] = gcov[r][0] * j[0][k] + gcov[r][1] * j[1][k];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) gcc[r][k] = j[0][r] * gjt[0][k] + j[1][r] * gjt[1][k];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 3; k++)
      gj[r][k] = 2.0 * (gjt[r][0] * cc[0][k] + gjt[r][1] * cc[1][k] + gjt[r][2] * cc[2][k]);

  // ---- ccam = W Sigma W^T ----
  float tmp3[3][3], gsig[3][3];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) tmp3[r][k] = w[0][r] * gcc[0][k] + w[1][r] * gcc[1][k] + w[2][r] * gcc[2][k];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) gsig[r][k] = tmp3[r][0] * w[0][k] + tmp3[r][1] * w[1][k] + tmp3[r][2] * w[2][k];

  // ---- Sigma = M M^T, M = R diag(s) ----
  float gm3[3][3], grot[3][3];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      gm3[r][k] = 2.0 * (gsig[r][0] * m3[0][k] + gsig[r][1] * m3[1][k] + gsig[r][2] * m3[2][k]);
  for (int k = 0; k < 3; k++) {
    float gs = 0.0;
    for (int r = 0; r < 3; r++) {
      grot[r][k] = gm3[r][k] * s[k];
      gs += gm3[r][k] * rot[r][k];
    }
    put_scales(i, l, uint(k), gs * s[k]);
  }
  float gq[4];
  gq[0] = 2.0 * (-qz * grot[0][1] + qy * grot[0][2] + qz * grot[1][0] - qx * grot[1][2] -
                 qy * grot[2][0] + qx * grot[2][1]);
  gq[1] = 2.0 * (qy * grot[0][1] + qz * grot[0][2] + qy * grot[1][0] - qw * grot[1][2] +
                 qz * grot[2][0] + qw * grot[2][1]) - 4.0 * qx * (grot[1][1] + grot[2][2]);
  gq[2] = 2.0 * (qx * grot[0][1] + qw * grot[0][2] + qx * grot[1][0] + qz * grot[1][2] -
                 qw * grot[2][0] + qz * grot[2][1]) - 4.0 * qy * (grot[0][0] + grot[2][2]);
  gq[3] = 2.0 * (-qw * grot[0][1] + qx * grot[0][2] + qw * grot[1][0] + qy * grot[1][2] +
                 qx * grot[2][0] + qy * grot[2][1]) - 4.0 * qz * (grot[0][0] + grot[1][1]);
  float qdot = gq[0] * q[0] + gq[1] * q[1] + gq[2] * q[2] + gq[3] * q[3];
  for (int k = 0; k < 4; k++) put_quats(i, l, uint(k), (gq[k] - q[k] * qdot) / qnorm);

  // ---- camera-space mean: through the 2D mean and the Jacobian ----
  // Inside the clamp J02 = -fx x / z^2; outside it -fx L / z: no x, half the z derivative.
  float tx = t[0], ty = t[1];
  float iz2 = iz * iz, iz3 = iz2 * iz;
  float gt[3];
  float gmx = ga2[GS_G2D_MEAN], gmy = ga2[GS_G2D_MEAN + 1];
  gt[0] = gmx * pc.fx * iz - (tj.z != 0.0 ? gj[0][2] * pc.fx * iz2 : 0.0);
  gt[1] = gmy * pc.fy * iz - (tj.w != 0.0 ? gj[1][2] * pc.fy * iz2 : 0.0);
  gt[2] = -gmx * pc.fx * tx * iz2 - gmy * pc.fy * ty * iz2 - gj[0][0] * pc.fx * iz2 +
          gj[0][2] * (1.0 + tj.z) * pc.fx * tj.x * iz3 - gj[1][1] * pc.fy * iz2 +
          gj[1][2] * (1.0 + tj.w) * pc.fy * tj.y * iz3;
  for (int d = 0; d < 3; d++) gmean[d] += w[0][d] * gt[0] + w[1][d] * gt[1] + w[2][d] * gt[2];
  for (uint d = 0u; d < 3u; d++) put_means(i, l, d, gmean[d]);

  if (pc.accumulate != 0u) {
    if (pc.count_radii == 0u || gsplat_visible(splats[i])) {
      float nx = gmx * 0.5 * float(pc.width), ny = gmy * 0.5 * float(pc.height);
      dens[3u * i] += sqrt(nx * nx + ny * ny);
      dens[3u * i + 1u] += 1.0;
    }
    dens[3u * i + 2u] = max(dens[3u * i + 2u], float(splats[i].radius));
  }
}

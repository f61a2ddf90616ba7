#version 450
// project_fwd.comp: forward stage 1, one invocation per splat: camera-space mean, EWA projection of
// the 3D covariance with the 0.3 dilation, conic, the opacity-aware box (where alpha can reach 1/255), tile rectangle, SH colour and
// opacity, into struct gs_splat2d. The operation order follows the C reference (gs_ref_tmpl.c)
// so that the two agree to float rounding; culled splats get radius 0 and an empty rectangle.
#include "gs_common.glsl"
#include "proj_common.glsl"

layout(local_size_x = GS_WG) in;
layout(std430, binding = 0) readonly buffer Means { float means[]; };
layout(std430, binding = 1) readonly buffer Scales { float log_scales[]; };
layout(std430, binding = 2) readonly buffer Quats { float quats[]; };
layout(std430, binding = 3) readonly buffer Opac { float opacity[]; };
layout(std430, binding = 4) readonly buffer SH { float sh[]; };
// The same coefficients as vec4s (48 floats a splat: 12 of them, 16-byte aligned), for
// `project_sh: vec4` (SH_VEC4): 12 loads of 16 bytes instead of 48 of 4, the same values.
layout(std430, binding = 4) readonly buffer SH4 { vec4 sh4[]; };
layout(constant_id = GS_SPEC_SH_VEC4) const uint SH_VEC4 = 0u;
layout(std430, binding = 5) writeonly buffer Splats { gs_splat2d splats[]; };
layout(push_constant, std430) uniform PC { gs_pc_project pc; };

const float SH_C0 = 0.28209479177387814;
const float SH_C1 = 0.4886025119029199;
const float SH_C2[5] = float[5](1.0925484305920792, -1.0925484305920792, 0.31539156525252005,
                                -1.0925484305920792, 0.5462742152960396);
const float SH_C3[7] = float[7](-0.5900435899266435, 2.890611442640554, -0.4570457994644658,
                                0.3731763325901154, -0.4570457994644658, 1.445305721320277,
                                -0.5900435899266435);

void write_culled(uint i) {
  gs_splat2d s;
  s.mean2d[0] = 0.0; s.mean2d[1] = 0.0;
  s.conic[0] = 0.0; s.conic[1] = 0.0; s.conic[2] = 0.0;
  s.opacity = 0.0;
  s.rgb[0] = 0.0; s.rgb[1] = 0.0; s.rgb[2] = 0.0;
  s.depth = 0.0;
  s.cov2d[0] = 0.0; s.cov2d[1] = 0.0; s.cov2d[2] = 0.0;
  s.radius = 0u;
  s.rect[0] = 0u; s.rect[1] = 0u;
  splats[i] = s;
}

// Tile range [lo, hi) covered by [centre - r, centre + r] on an axis of `tiles` tiles.
uvec2 tile_span(float centre, float r, uint tiles) {
  float a = floor((centre - r) / float(GS_TILE_PX));
  float b = floor((centre + r) / float(GS_TILE_PX)) + 1.0;
  float n = float(tiles);
  uint lo = a < 0.0 ? 0u : (a > n ? tiles : uint(a));
  uint hi = b < 0.0 ? 0u : (b > n ? tiles : uint(b));
  return uvec2(lo, hi);
}

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  float p[3] = float[3](means[3 * i], means[3 * i + 1], means[3 * i + 2]);
  float t[3];
  float w[3][3];
  for (int r = 0; r < 3; r++) {
    t[r] = pc.viewmat[4 * r + 0] * p[0] + pc.viewmat[4 * r + 1] * p[1] +
           pc.viewmat[4 * r + 2] * p[2] + pc.viewmat[4 * r + 3];
    for (int k = 0; k < 3; k++) w[r][k] = pc.viewmat[4 * r + k];
  }
  if (!(t[2] > GS_K_NEAR_Z)) { write_culled(i); return; }
  float qr[4] = float[4](quats[4 * i], quats[4 * i + 1], quats[4 * i + 2], quats[4 * i + 3]);
  float qn = sqrt(qr[0] * qr[0] + qr[1] * qr[1] + qr[2] * qr[2] + qr[3] * qr[3]);
  if (!(qn > 0.0)) { write_culled(i); return; }
  float qw = qr[0] / qn, qx = qr[1] / qn, qy = qr[2] / qn, qz = qr[3] / qn;
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
  float s3[3] = float[3](exp(log_scales[3 * i]), exp(log_scales[3 * i + 1]),
                         exp(log_scales[3 * i + 2]));
  float m3[3][3];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) m3[r][k] = rot[r][k] * s3[k];
  float sig[3][3], ws[3][3], cc[3][3];
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
  // The Jacobian at x/z, y/z clamped to the field of view widened by 30% (gs_ref_tmpl.c).
  vec2 tj = gs_jacobian_xy(t[0], t[1], t[2], iz, pc.fx, pc.fy, pc.cx, pc.cy, pc.width, pc.height).xy;
  float j[2][3];
  j[0][0] = pc.fx * iz;
  j[0][1] = 0.0;
  j[0][2] = -pc.fx * tj.x * iz * iz;
  j[1][0] = 0.0;
  j[1][1] = pc.fy * iz;
  j[1][2] = -pc.fy * tj.y * iz * iz;
  float jc[2][3];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 3; k++)
      jc[r][k] = j[r][0] * cc[0][k] + j[r][1] * cc[1][k] + j[r][2] * cc[2][k];
  float xx = jc[0][0] * j[0][0] + jc[0][1] * j[0][1] + jc[0][2] * j[0][2];
  float xy = jc[0][0] * j[1][0] + jc[0][1] * j[1][1] + jc[0][2] * j[1][2];
  float yy = jc[1][0] * j[1][0] + jc[1][1] * j[1][1] + jc[1][2] * j[1][2];
  float cov0 = xx + GS_K_DILATION, cov1 = xy, cov2 = yy + GS_K_DILATION;
  float det = cov0 * cov2 - cov1 * cov1;
  if (!(det > 0.0)) { write_culled(i); return; }
  // The box where alpha can reach 1/255 (gs_ref_tmpl.c); o < 1/255 never passes the alpha test.
  float o = 1.0 / (1.0 + exp(-opacity[i]));
  if (!(o >= GS_K_ALPHA_MIN)) { write_culled(i); return; }
  float e = min(sqrt(2.0 * log(o / GS_K_ALPHA_MIN)), 3.33);
  float rx = ceil(e * sqrt(cov0)), ry = ceil(e * sqrt(cov2));
  if (!(rx < 16777216.0 && ry < 16777216.0)) { write_culled(i); return; }
  float mx = pc.fx * t[0] * iz + pc.cx;
  float my = pc.fy * t[1] * iz + pc.cy;
  uvec2 sx = tile_span(mx, rx, pc.tiles_x);
  uvec2 sy = tile_span(my, ry, pc.tiles_y);
  if (sx.y <= sx.x || sy.y <= sy.x) { write_culled(i); return; }
  float rf = max(rx, ry);

  // Colour: SH to the active degree in the direction mean - campos.
  float dv0 = p[0] - pc.campos[0], dv1 = p[1] - pc.campos[1], dv2 = p[2] - pc.campos[2];
  float vn = sqrt(dv0 * dv0 + dv1 * dv1 + dv2 * dv2);
  float x = vn > 0.0 ? dv0 / vn : 0.0, y = vn > 0.0 ? dv1 / vn : 0.0, z = vn > 0.0 ? dv2 / vn : 0.0;
  float b[16];
  b[0] = SH_C0;
  uint deg = min(pc.sh_degree, 3u);
  if (deg > 0u) {
    b[1] = -SH_C1 * y;
    b[2] = SH_C1 * z;
    b[3] = -SH_C1 * x;
  }
  if (deg > 1u) {
    float xx2 = x * x, yy2 = y * y, zz2 = z * z;
    b[4] = SH_C2[0] * x * y;
    b[5] = SH_C2[1] * y * z;
    b[6] = SH_C2[2] * (2.0 * zz2 - xx2 - yy2);
    b[7] = SH_C2[3] * x * z;
    b[8] = SH_C2[4] * (xx2 - yy2);
    if (deg > 2u) {
      b[9] = SH_C3[0] * y * (3.0 * xx2 - yy2);
      b[10] = SH_C3[1] * x * y * z;
      b[11] = SH_C3[2] * y * (4.0 * zz2 - xx2 - yy2);
      b[12] = SH_C3[3] * z * (2.0 * zz2 - 3.0 * xx2 - 3.0 * yy2);
      b[13] = SH_C3[4] * x * (4.0 * zz2 - xx2 - yy2);
      b[14] = SH_C3[5] * z * (xx2 - yy2);
      b[15] = SH_C3[6] * x * (xx2 - 3.0 * yy2);
    }
  }
  uint nk = (deg + 1u) * (deg + 1u);
  uint shb = uint(GS_SH_COEFFS_N) * 3u * i;
  gs_splat2d s;
  // Constant loop bounds let the compiler unroll and keep b[] in registers (a loop to nk would
  // index it dynamically, from local memory); the sum keeps the reference's order.
  vec3 v = vec3(0.0);
  if (SH_VEC4 != 0u) {
    // The 12 vec4s up to the active degree's last coefficient (3 nk floats), the rest zero; then
    // coefficient k is floats 3k .. 3k + 2 of them, constant indices once unrolled.
    float f[48];
    for (uint q = 0u; q < 12u; q++) {
      vec4 c = 4u * q < 3u * nk ? sh4[12u * i + q] : vec4(0.0);
      f[4u * q] = c.x, f[4u * q + 1u] = c.y, f[4u * q + 2u] = c.z, f[4u * q + 3u] = c.w;
    }
    for (uint k = 0u; k < uint(GS_SH_COEFFS_N); k++)
      if (k < nk) v += b[k] * vec3(f[3u * k], f[3u * k + 1u], f[3u * k + 2u]);
  } else {
    for (uint k = 0u; k < uint(GS_SH_COEFFS_N); k++) {
      if (k < nk) v += b[k] * vec3(sh[shb + 3u * k], sh[shb + 3u * k + 1u], sh[shb + 3u * k + 2u]);
    }
  }
  v += 0.5;
  for (int ch = 0; ch < 3; ch++) s.rgb[ch] = v[ch] < 0.0 ? 0.0 : v[ch];
  s.mean2d[0] = mx;
  s.mean2d[1] = my;
  s.cov2d[0] = cov0; s.cov2d[1] = cov1; s.cov2d[2] = cov2;
  s.conic[0] = cov2 / det;
  s.conic[1] = -cov1 / det;
  s.conic[2] = cov0 / det;
  s.depth = t[2];
  s.radius = uint(rf);
  s.rect[0] = sx.x | (sy.x << 16);
  s.rect[1] = sx.y | (sy.y << 16);
  s.opacity = o;
  splats[i] = s;
}

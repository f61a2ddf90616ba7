// proj_common.glsl: the projection detail project_fwd and project_bwd share (needs gs_shared.h).
//
// The EWA Jacobian is taken at x/z, y/z clamped to the field of view widened by 30% of its
// half-width on each side, as gsplat and the Inria code do (the C reference: proj_setup in
// pipeline/gs_ref_tmpl.c): a splat near the camera plane but far off-screen would otherwise get a
// 2D covariance stretched across the whole image. Returns (tx, ty, free_x, free_y): the camera
// x and y the Jacobian uses (z times the clamped ratio) and 1.0 where the ratio was inside the
// limits (there J depends on x, resp. y; outside it only on z).
vec4 gs_jacobian_xy(float x, float y, float z, float iz, float fx, float fy, float cx, float cy,
                    uint width, uint height) {
  float fov_x = 0.5 * float(width) / fx, fov_y = 0.5 * float(height) / fy;
  float lo_x = -(cx / fx + 0.3 * fov_x), hi_x = (float(width) - cx) / fx + 0.3 * fov_x;
  float lo_y = -(cy / fy + 0.3 * fov_y), hi_y = (float(height) - cy) / fy + 0.3 * fov_y;
  float u = x * iz, v = y * iz;
  float fu = (u >= lo_x && u <= hi_x) ? 1.0 : 0.0;
  float fv = (v >= lo_y && v <= hi_y) ? 1.0 : 0.0;
  return vec4(z * (u < lo_x ? lo_x : (u > hi_x ? hi_x : u)),
              z * (v < lo_y ? lo_y : (v > hi_y ? hi_y : v)), fu, fv);
}

// sh_common.glsl: the real spherical-harmonics basis of the 3DGS reference up to degree 3, and its
// derivative with respect to each component of the (unit) direction, treated as independent (the
// caller chains the normalisation). Entries above the active degree are left untouched.
const float SH_C0 = 0.28209479177387814;
const float SH_C1 = 0.4886025119029199;
const float SH_C2_0 = 1.0925484305920792, SH_C2_1 = -1.0925484305920792,
            SH_C2_2 = 0.31539156525252005, SH_C2_3 = -1.0925484305920792,
            SH_C2_4 = 0.5462742152960396;
const float SH_C3_0 = -0.5900435899266435, SH_C3_1 = 2.890611442640554,
            SH_C3_2 = -0.4570457994644658, SH_C3_3 = 0.3731763325901154,
            SH_C3_4 = -0.4570457994644658, SH_C3_5 = 1.445305721320277,
            SH_C3_6 = -0.5900435899266435;

void sh_basis_grad(vec3 d, uint degree, out float b[16], out vec3 db[16]) {
  float x = d.x, y = d.y, z = d.z;
  float xx = x * x, yy = y * y, zz = z * z;
  for (int k = 0; k < 16; k++) { b[k] = 0.0; db[k] = vec3(0.0); }
  b[0] = SH_C0;
  if (degree < 1u) return;
  b[1] = -SH_C1 * y;
  b[2] = SH_C1 * z;
  b[3] = -SH_C1 * x;
  db[1] = vec3(0.0, -SH_C1, 0.0);
  db[2] = vec3(0.0, 0.0, SH_C1);
  db[3] = vec3(-SH_C1, 0.0, 0.0);
  if (degree < 2u) return;
  b[4] = SH_C2_0 * x * y;
  b[5] = SH_C2_1 * y * z;
  b[6] = SH_C2_2 * (2.0 * zz - xx - yy);
  b[7] = SH_C2_3 * x * z;
  b[8] = SH_C2_4 * (xx - yy);
  db[4] = vec3(SH_C2_0 * y, SH_C2_0 * x, 0.0);
  db[5] = vec3(0.0, SH_C2_1 * z, SH_C2_1 * y);
  db[6] = vec3(-2.0 * SH_C2_2 * x, -2.0 * SH_C2_2 * y, 4.0 * SH_C2_2 * z);
  db[7] = vec3(SH_C2_3 * z, 0.0, SH_C2_3 * x);
  db[8] = vec3(2.0 * SH_C2_4 * x, -2.0 * SH_C2_4 * y, 0.0);
  if (degree < 3u) return;
  b[9] = SH_C3_0 * y * (3.0 * xx - yy);
  b[10] = SH_C3_1 * x * y * z;
  b[11] = SH_C3_2 * y * (4.0 * zz - xx - yy);
  b[12] = SH_C3_3 * z * (2.0 * zz - 3.0 * xx - 3.0 * yy);
  b[13] = SH_C3_4 * x * (4.0 * zz - xx - yy);
  b[14] = SH_C3_5 * z * (xx - yy);
  b[15] = SH_C3_6 * x * (xx - 3.0 * yy);
  db[9] = vec3(6.0 * SH_C3_0 * x * y, SH_C3_0 * (3.0 * xx - 3.0 * yy), 0.0);
  db[10] = vec3(SH_C3_1 * y * z, SH_C3_1 * x * z, SH_C3_1 * x * y);
  db[11] = vec3(-2.0 * SH_C3_2 * x * y, SH_C3_2 * (4.0 * zz - xx - 3.0 * yy), 8.0 * SH_C3_2 * y * z);
  db[12] = vec3(-6.0 * SH_C3_3 * x * z, -6.0 * SH_C3_3 * y * z,
                SH_C3_3 * (6.0 * zz - 3.0 * xx - 3.0 * yy));
  db[13] = vec3(SH_C3_4 * (4.0 * zz - 3.0 * xx - yy), -2.0 * SH_C3_4 * x * y, 8.0 * SH_C3_4 * x * z);
  db[14] = vec3(2.0 * SH_C3_5 * x * z, -2.0 * SH_C3_5 * y * z, SH_C3_5 * (xx - yy));
  db[15] = vec3(SH_C3_6 * (3.0 * xx - 3.0 * yy), -6.0 * SH_C3_6 * x * y, 0.0);
}

/* gs_scene_undistort.c: lens distortion removed once, at load, by resampling every distorted
 * image into the pinhole image the rest of the pipeline assumes.
 *
 * The model (OpenCV's, which COLMAP's OPENCV / RADIAL / SIMPLE_RADIAL and nerfstudio's and
 * instant-ngp's k1..k4, p1, p2 all are): a ray with pinhole coordinates (x, y) = (X/Z, Y/Z) lands
 * on the sensor at the distorted normalised point r2 = x^2 + y^2,  radial = 1 + k1 r2 + k2 r2^2 +
 * k3 r2^3 + k4 r2^4, x_d = x radial + 2 p1 x y + p2 (r2 + 2 x^2),  y_d = y radial + p1 (r2 + 2 y^2)
 * + 2 p2 x y, which the captured image shows at pixel (fx x_d + cx, fy y_d + cy).
 *
 * Derivation of the resampling. We want the image an ideal pinhole camera with the same fx, fy,
 * cx, cy and pose would have taken: its pixel centre (u, v) sees the ray with pinhole coordinates
 * x = (u - cx) / fx, y = (v - cy) / fy. The real lens sent that same ray to the distorted point
 * D(x, y) above, so the ideal pixel's colour is the captured image's colour at
 * (fx x_d + cx, fy y_d + cy). Going from output to input this way needs only the forward model,
 * never its inverse (which has no closed form), and every output pixel gets exactly one sample.
 * The sample is bilinear between the four nearest captured pixel centres (pixel i has its centre
 * at i + 0.5, gs_types.h). A ray whose sample falls outside the captured image (the corners of
 * a pincushion lens) takes the nearest edge pixel: the camera saw nothing there, and an edge
 * colour biases the fit less than a background colour would. Keeping fx, fy, cx, cy unchanged
 * keeps the field of view of the centre of the image, and the principal point where the
 * calibration put it, so projection needs nothing but the pinhole contract of gs_types.h. */
#include <math.h>
#include <stdlib.h>

#include "gs_scene_int.h"

int gs_intrinsics_distorted(const struct gs_intrinsics *in) {
  for (int i = 0; i < 4; i++)
    if (in->k[i] != 0.0) return 1;
  return in->p[0] != 0.0 || in->p[1] != 0.0;
}

void gs_intrinsics_distort(const struct gs_intrinsics *in, double x, double y, double *xd,
                           double *yd) {
  double r2 = x * x + y * y;
  double radial = 1.0 + r2 * (in->k[0] + r2 * (in->k[1] + r2 * (in->k[2] + r2 * in->k[3])));
  *xd = x * radial + 2.0 * in->p[0] * x * y + in->p[1] * (r2 + 2.0 * x * x);
  *yd = y * radial + in->p[0] * (r2 + 2.0 * y * y) + 2.0 * in->p[1] * x * y;
}

int gs_scene_undistort(const float *rgb, uint32_t w, uint32_t h, const struct gs_intrinsics *in,
                       float **out_p, struct sw_err *err) {
  float *out = malloc((size_t)w * h * 3 * sizeof(float));
  if (!out) return sw_err_set(err, SW_ENOMEM, "undistort: out of memory for %ux%u", w, h);
  for (uint32_t v = 0; v < h; v++)
    for (uint32_t u = 0; u < w; u++) {
      double x = ((double)u + 0.5 - in->cx) / in->fx, y = ((double)v + 0.5 - in->cy) / in->fy;
      double xd, yd;
      gs_intrinsics_distort(in, x, y, &xd, &yd);
      /* continuous source position, shifted so that integer values are pixel centres */
      double sx = in->fx * xd + in->cx - 0.5, sy = in->fy * yd + in->cy - 0.5;
      if (!isfinite(sx) || !isfinite(sy)) sx = sy = 0.0;
      if (sx < 0) sx = 0;
      if (sy < 0) sy = 0;
      if (sx > w - 1) sx = w - 1;
      if (sy > h - 1) sy = h - 1;
      uint32_t x0 = (uint32_t)sx, y0 = (uint32_t)sy;
      uint32_t x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
      float tx = (float)(sx - x0), ty = (float)(sy - y0);
      const float *a = rgb + 3 * ((size_t)y0 * w + x0), *b = rgb + 3 * ((size_t)y0 * w + x1);
      const float *c = rgb + 3 * ((size_t)y1 * w + x0), *d = rgb + 3 * ((size_t)y1 * w + x1);
      float *o = out + 3 * ((size_t)v * w + u);
      for (int k = 0; k < 3; k++)
        o[k] = (1 - ty) * ((1 - tx) * a[k] + tx * b[k]) + ty * ((1 - tx) * c[k] + tx * d[k]);
    }
  *out_p = out;
  return 0;
}

/* gs_metrics.c: PSNR and SSIM for evaluation (see gs_metrics.h). SSIM is the reference's
 * (gs_ref_ssim_d), run in double on the clamped inputs so that a score does not depend on
 * float rounding in the window sums. */
#include "gs_metrics.h"

#include <math.h>
#include <stdlib.h>

#include "gs_ref.h"

static double clamp01(float v) { return v < 0.0f ? 0.0 : v > 1.0f ? 1.0 : (double)v; }

static int check_args(const char *what, const float *img, const float *ref, uint32_t w, uint32_t h,
                      const double *out, struct sw_err *err) {
  if (!img || !ref || !out) return sw_err_set(err, SW_EINVAL, "%s: missing image or output", what);
  if (w == 0 || h == 0) return sw_err_set(err, SW_EINVAL, "%s: empty image (%ux%u)", what, w, h);
  size_t n = (size_t)w * h * 3;
  for (size_t k = 0; k < n; k++)
    if (isnan(img[k]) || isnan(ref[k]))
      return sw_err_set(err, SW_EINVAL, "%s: NaN at pixel %zu channel %zu of the %s image", what,
                        k / 3, k % 3, isnan(img[k]) ? "rendered" : "reference");
  return 0;
}

int gs_metrics_psnr(const float *img, const float *ref, uint32_t w, uint32_t h, double *psnr_db,
                    struct sw_err *err) {
  int rc = check_args("gs_metrics_psnr", img, ref, w, h, psnr_db, err);
  if (rc != 0) return rc;
  size_t n = (size_t)w * h * 3;
  double se = 0.0;
  for (size_t k = 0; k < n; k++) {
    double d = clamp01(img[k]) - clamp01(ref[k]);
    se += d * d;
  }
  double mse = se / (double)n;
  *psnr_db = mse > 0.0 ? -10.0 * log10(mse) : INFINITY;
  return 0;
}

int gs_metrics_ssim(const float *img, const float *ref, uint32_t w, uint32_t h, double *ssim,
                    struct sw_err *err) {
  int rc = check_args("gs_metrics_ssim", img, ref, w, h, ssim, err);
  if (rc != 0) return rc;
  size_t n = (size_t)w * h * 3;
  double *a = malloc(2 * n * sizeof *a);
  if (!a) return sw_err_set(err, SW_ENOMEM, "gs_metrics_ssim: out of memory for %ux%u", w, h);
  double *b = a + n;
  for (size_t k = 0; k < n; k++) {
    a[k] = clamp01(img[k]);
    b[k] = clamp01(ref[k]);
  }
  rc = gs_ref_ssim_d(a, b, w, h, ssim, NULL, err);
  free(a);
  return rc;
}

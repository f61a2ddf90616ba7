/* gs_metrics.c: PSNR, SSIM and the SSIM window for evaluation (see gs_metrics.h). SSIM runs in
 * double on the clamped inputs so that a score does not depend on float rounding in the window
 * sums; its passes add the taps in the order the C reference's SSIM does (gs_ref_tmpl.c), so the
 * two give the same bits in double (test_ref checks it). */
#include "gs_metrics.h"

#include <math.h>
#include <stdlib.h>

double gs_metrics_ssim_tap(int k) {
  double sum = 0.0, v = 0.0;
  for (int j = 0; j < GS_METRICS_SSIM_WINDOW; j++) {
    double x = j - GS_METRICS_SSIM_WINDOW / 2;
    double e = exp(-x * x / (2.0 * GS_METRICS_SSIM_SIGMA * GS_METRICS_SSIM_SIGMA));
    sum += e;
    if (j == k) v = e;
  }
  return v / sum;
}

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

/* The SSIM window's blur, once for both precisions: out = the w x h plane `in` convolved with
 * the 2-D window, zero-padded "same", as a horizontal pass into tmp and a vertical one, each adding
 * its taps (gs_metrics_ssim_tap, rounded to T) in ascending order over the outputs where the tap
 * falls inside the image, so the inner loops are branch-free. */
#define SSIM_BLUR(NAME, T)                                                                         \
  void NAME(const T *in, T *out, T *tmp, uint32_t w, uint32_t h) {                                 \
    T tap[GS_METRICS_SSIM_WINDOW];                                                                 \
    for (int k = 0; k < GS_METRICS_SSIM_WINDOW; k++) tap[k] = (T)gs_metrics_ssim_tap(k);           \
    const long half = GS_METRICS_SSIM_WINDOW / 2, lw = (long)w, lh = (long)h;                      \
    for (long y = 0; y < lh; y++) {                                                                \
      const T *row = in + y * lw;                                                                  \
      T *dst = tmp + y * lw;                                                                       \
      for (long x = 0; x < lw; x++) dst[x] = (T)0;                                                 \
      for (long k = 0; k < GS_METRICS_SSIM_WINDOW; k++) {                                          \
        long off = k - half;                                                                       \
        long x0 = off < 0 ? -off : 0, x1 = off > 0 ? lw - off : lw;                                \
        for (long x = x0; x < x1; x++) dst[x] += tap[k] * row[x + off];                            \
      }                                                                                            \
    }                                                                                              \
    for (long y = 0; y < lh; y++) {                                                                \
      T *dst = out + y * lw;                                                                       \
      for (long x = 0; x < lw; x++) dst[x] = (T)0;                                                 \
      for (long k = 0; k < GS_METRICS_SSIM_WINDOW; k++) {                                          \
        long yy = y + k - half;                                                                    \
        if (yy < 0 || yy >= lh) continue;                                                          \
        const T *src = tmp + yy * lw;                                                              \
        for (long x = 0; x < lw; x++) dst[x] += tap[k] * src[x];                                   \
      }                                                                                            \
    }                                                                                              \
  }
SSIM_BLUR(gs_metrics_ssim_blur, double)
SSIM_BLUR(gs_metrics_ssim_blurf, float)
#undef SSIM_BLUR

int gs_metrics_ssim(const float *img, const float *ref, uint32_t w, uint32_t h, double *ssim,
                    struct sw_err *err) {
  int rc = check_args("gs_metrics_ssim", img, ref, w, h, ssim, err);
  if (rc != 0) return rc;
  size_t n = (size_t)w * h;
  /* Per channel: the two images, their products, and the five blurred planes. */
  enum { X, Y, P, MU1, MU2, S11, S22, S12, TMP, NPLANES };
  double *buf = malloc(NPLANES * n * sizeof *buf);
  if (!buf) return sw_err_set(err, SW_ENOMEM, "gs_metrics_ssim: out of memory for %ux%u", w, h);
  double *pl[NPLANES];
  for (int k = 0; k < NPLANES; k++) pl[k] = buf + (size_t)k * n;
  const double c1 = GS_METRICS_SSIM_C1, c2 = GS_METRICS_SSIM_C2;
  double total = 0.0;
  for (int ch = 0; ch < 3; ch++) {
    for (size_t p = 0; p < n; p++) {
      pl[X][p] = clamp01(img[3 * p + ch]);
      pl[Y][p] = clamp01(ref[3 * p + ch]);
    }
    gs_metrics_ssim_blur(pl[X], pl[MU1], pl[TMP], w, h);
    gs_metrics_ssim_blur(pl[Y], pl[MU2], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++) pl[P][p] = pl[X][p] * pl[X][p];
    gs_metrics_ssim_blur(pl[P], pl[S11], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++) pl[P][p] = pl[Y][p] * pl[Y][p];
    gs_metrics_ssim_blur(pl[P], pl[S22], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++) pl[P][p] = pl[X][p] * pl[Y][p];
    gs_metrics_ssim_blur(pl[P], pl[S12], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++) {
      double mu1 = pl[MU1][p], mu2 = pl[MU2][p];
      double s11 = pl[S11][p] - mu1 * mu1, s22 = pl[S22][p] - mu2 * mu2;
      double s12 = pl[S12][p] - mu1 * mu2;
      double n1 = 2.0 * mu1 * mu2 + c1, n2 = 2.0 * s12 + c2;
      double d1 = mu1 * mu1 + mu2 * mu2 + c1, d2 = s11 + s22 + c2;
      total += (n1 * n2) / (d1 * d2);
    }
  }
  free(buf);
  *ssim = total / (double)(3 * n);
  return 0;
}

/* gs_metrics.h: image quality metrics for evaluation (`splat-train render`, the trainer's test-view
 * checkpoints and final metrics): PSNR and SSIM of a rendered RGB image against its ground truth,
 * and the SSIM definition itself (window, constants), which the C reference's differentiable SSIM
 * (gs_ref.h, the oracle of the GPU loss) takes from here. No GPU and no reference code: the
 * trainer links this module alone.
 *
 * Both inputs are clamped to [0, 1] first, as the 3DGS and gsplat evaluators do (a rendered image
 * is clamped before it is saved or scored). Sums are in double. SSIM: 11x11 Gaussian window
 * (sigma 1.5, the outer product of the 1-D taps below), zero padding, C1 = 0.01^2, C2 = 0.03^2,
 * mean over pixels and channels: the 3DGS reference evaluator's definition; gsplat's evaluator
 * (torchmetrics) scores only the pixels whose window lies inside the image, which reads slightly
 * differently. Images are row-major RGB floats, 3 per pixel. */
#ifndef GS_METRICS_H
#define GS_METRICS_H

#include <stdint.h>

#include "sw_err.h"

#define GS_METRICS_SSIM_WINDOW 11 /* taps of the 1-D window; the 2-D one is their outer product */
#define GS_METRICS_SSIM_SIGMA 1.5
#define GS_METRICS_SSIM_C1 (0.01 * 0.01)
#define GS_METRICS_SSIM_C2 (0.03 * 0.03)

/* Tap k (0 .. GS_METRICS_SSIM_WINDOW - 1) of the normalised 1-D Gaussian window, in double. */
double gs_metrics_ssim_tap(int k);

/* The SSIM window's blur of a w x h plane (zero padding, "same" size; tmp: w h scratch): the one
 * definition, in double for the metrics and in float for the C reference the GPU's SSIM loss is
 * checked against (gs_ref). The window is separable and symmetric, so it is its own transpose. */
void gs_metrics_ssim_blur(const double *in, double *out, double *tmp, uint32_t w, uint32_t h);
void gs_metrics_ssim_blurf(const float *in, float *out, float *tmp, uint32_t w, uint32_t h);

/* PSNR in dB with peak 1: 10 log10(1 / MSE) over every pixel and channel. Identical images give
 * +INFINITY. Returns 0, or SW_EINVAL for an empty image / NULL buffer / a NaN in the input. */
int gs_metrics_psnr(const float *img, const float *ref, uint32_t w, uint32_t h, double *psnr_db,
                    struct sw_err *err);

/* SSIM in [-1, 1] (1 for identical images). Returns 0, SW_EINVAL or SW_ENOMEM. */
int gs_metrics_ssim(const float *img, const float *ref, uint32_t w, uint32_t h, double *ssim,
                    struct sw_err *err);

#endif

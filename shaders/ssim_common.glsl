// ssim_common.glsl: the 11-tap Gaussian window (sigma 1.5, normalised; the 2-D window of the SSIM
// is its outer product) and helpers shared by the loss / SSIM kernels. Zero padding: taps outside
// the image contribute nothing, as in the 3DGS reference's conv2d with padding 5.
const float SSIM_W[11] = float[11](0.00102838008, 0.00759875814, 0.0360007721, 0.10936069,
                                   0.213005538, 0.266011725, 0.213005538, 0.10936069,
                                   0.0360007721, 0.00759875814, 0.00102838008);
const float SSIM_C1 = 0.0001;  // 0.01^2
const float SSIM_C2 = 0.0009;  // 0.03^2

layout(constant_id = GS_SPEC_SSIM_WALK) const uint SSIM_WALK = 1u;  // 0 scalar, 1 float4, 2 + recip
// The maps between the passes: ssim_h holds 15 quantities per pixel (moment q of channel c at
// m = 5 c + q), ssim_p and ssim_q 9 (derivative q of channel c at m = 3 c + q). Interleaved, a
// pixel's quantities are neighbours (K p + m) and a subgroup's load of one quantity strides K
// floats; planar (the default, ssim_layout), quantity m is a plane of npix floats (m npix + p)
// and the same load is one contiguous run. The same values either way: only addresses change.
layout(constant_id = GS_SPEC_SSIM_PLANAR) const uint SSIM_PLANAR = 1u;
uint ssim_at(uint K, uint npix, uint p, uint m) { return SSIM_PLANAR != 0u ? m * npix + p : K * p + m; }

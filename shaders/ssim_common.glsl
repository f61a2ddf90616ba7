// ssim_common.glsl: the 11-tap Gaussian window (sigma 1.5, normalised; the 2-D window of the SSIM
// is its outer product) and helpers shared by the loss / SSIM kernels. Zero padding: taps outside
// the image contribute nothing, as in the 3DGS reference's conv2d with padding 5.
const float SSIM_W[11] = float[11](0.00102838008, 0.00759875814, 0.0360007721, 0.10936069,
                                   0.213005538, 0.266011725, 0.213005538, 0.10936069,
                                   0.0360007721, 0.00759875814, 0.00102838008);
const float SSIM_C1 = 0.0001;  // 0.01^2
const float SSIM_C2 = 0.0009;  // 0.03^2

layout(constant_id = 0) const uint SSIM_WALK = 1u;  // 0 scalar, 1 float4, 2 float4 + reciprocal

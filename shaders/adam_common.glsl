// adam_common.glsl: one Adam step of one parameter float (PyTorch form, bias-corrected, as
// gs_ref_adam_step), shared by adam.comp and the projection backward fused with Adam
// (project_bwd_adam.comp), so that both write the same bits. mv is the float's (m, v), updated in
// place; the result is the parameter's change (subtract it). step_size = lr / (1 - beta1^t),
// sqrt_bc2 = sqrt(1 - beta2^t): struct gs_pc_adam.
float adam_update(inout vec2 mv, float g, float step_size, float beta1, float beta2, float eps,
                  float sqrt_bc2) {
  mv.x = beta1 * mv.x + (1.0 - beta1) * g;
  mv.y = beta2 * mv.y + (1.0 - beta2) * g * g;
  float denom = sqrt(mv.y) / sqrt_bc2 + eps;
  return step_size * mv.x / denom;
}

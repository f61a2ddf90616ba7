/* gs_config.c: the key table of the trainer configuration (type, default, meaning), parsing of
 * values from `--set` and YAML (sw_yaml: libyaml), validation, and serialisation to JSON (jansson)
 * for result.json. Adding a key means one line in `keys[]` plus the struct field. */
#include "gs_config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sw_yaml.h"

enum ktype { K_INT, K_I64, K_FLOAT, K_ENUM, K_STR, K_LIST };

struct key {
  const char *name;
  enum ktype type;
  size_t off;
  const char *def;   /* default, as text */
  const char *enums; /* K_ENUM: "a|b|c", value = position */
  double lo, hi;     /* K_INT/K_I64/K_FLOAT: inclusive range */
  const char *meaning;
};

#define OFF(f) offsetof(struct gs_config, f)
#define BIG 1e18

static const struct key keys[] = {
    {"iterations", K_INT, OFF(iterations), "30000", NULL, 0, 1e9, "training iterations"},
    {"seed", K_I64, OFF(seed), "42", NULL, 0, 9.2e18,
     "seed of the random init and the camera order"},
    {"sh_degree", K_INT, OFF(sh_degree), "3", NULL, 0, 3, "maximum spherical-harmonics degree"},
    {"sh_every", K_INT, OFF(sh_every), "1000", NULL, 1, 1e9,
     "iterations per unlocked SH degree (degree 0 first)"},
    {"resolution_scale", K_INT, OFF(resolution_scale), "1", NULL, 1, 64,
     "integer downscale factor applied when loading the scene (1 = full, 2 = half, ...)"},
    {"background", K_ENUM, OFF(background), "white", "white|black", 0, 0,
     "background composited behind the splats and into RGBA ground truth"},
    {"init_points", K_INT, OFF(init_points), "100000", NULL, 1, 1e8,
     "random initial Gaussians (synthetic scenes have no point cloud)"},
    {"init_extent", K_FLOAT, OFF(init_extent), "1", NULL, 1e-3, 10,
     "size of the random init box: times the scene's content bounds (init_box aabb: [-1.3, "
     "1.3]^3 unless the scene gives an aabb) or half-size times the scene extent (init_box "
     "extent; gsplat's random init is extent with 3)"},
    {"scene_extent", K_FLOAT, OFF(scene_extent), "0", NULL, 0, 1e6,
     "scene extent (scale) the position learning rate, the clone/split size and the big-splat "
     "pruning are relative to; 0 = 1.1 x the largest distance of a training camera from their "
     "centre (gsplat's scene_scale)"},
    {"init_box", K_ENUM, OFF(init_box), "aabb", "aabb|extent", 0, 0,
     "random init box: the content bounds (the Inria synthetic recipe) or a cube of half-size "
     "init_extent x scene extent around the origin (gsplat)"},
    {"init", K_ENUM, OFF(init), "auto", "auto|random|points", 0, 0,
     "initial Gaussians: the scene's point cloud (COLMAP points3D, with its colours) or random "
     "(init_points in the init box); auto = points when the scene has them, else random"},
    {"scene_normalize", K_ENUM, OFF(scene_normalize), "auto", "auto|on|off", 0, 0,
     "move and scale the world so that the training cameras' centroid is the origin and the "
     "farthest is at distance 1; auto = on for real captures (COLMAP, transforms.json), off for "
     "NeRF-synthetic"},
    {"missing_frames", K_ENUM, OFF(missing_frames), "skip", "skip|error", 0, 0,
     "transforms.json frames whose image is missing: skipped with one warning naming them, or "
     "an error"},
    {"lambda_dssim", K_FLOAT, OFF(lambda_dssim), "0.2", NULL, 0, 1,
     "loss = (1 - lambda) L1 + lambda (1 - SSIM); 0 = L1 only"},
    {"ssim_padding", K_ENUM, OFF(ssim_padding), "same", "same|valid", 0, 0,
     "SSIM map of the loss: same = every pixel, zero-padded windows (the Inria code); valid = "
     "only the (H-10) x (W-10) pixels whose 11x11 window lies inside the image, no gradient from "
     "the border (gsplat's fused-ssim padding=\"valid\")"},
    {"alpha_max", K_FLOAT, OFF(alpha_max), "0.99", NULL, 0.9, 0.9999,
     "alpha clamp of the rasterizer, alpha = min(alpha_max, opacity exp(-sigma)), forward and "
     "backward (the Inria code: 0.99; gsplat: 0.999)"},
    {"lr_means", K_FLOAT, OFF(lr_means), "0.00016", NULL, 0, 10,
     "initial position learning rate, times the scene extent"},
    {"lr_means_final", K_FLOAT, OFF(lr_means_final), "0.0000016", NULL, 0, 10,
     "final position learning rate (exponential decay), times the scene extent"},
    {"lr_means_steps", K_INT, OFF(lr_means_steps), "0", NULL, 0, 1e9,
     "position lr decay length in iterations (0 = iterations)"},
    {"lr_sh_dc", K_FLOAT, OFF(lr_sh_dc), "0.0025", NULL, 0, 10, "SH degree-0 learning rate"},
    {"lr_sh_rest", K_FLOAT, OFF(lr_sh_rest), "0.000125", NULL, 0, 10,
     "learning rate of SH degrees 1..3 (dc / 20)"},
    {"lr_opacity", K_FLOAT, OFF(lr_opacity), "0.05", NULL, 0, 10, "opacity-logit learning rate"},
    {"lr_scales", K_FLOAT, OFF(lr_scales), "0.005", NULL, 0, 10, "log-scale learning rate"},
    {"lr_quats", K_FLOAT, OFF(lr_quats), "0.001", NULL, 0, 10, "quaternion learning rate"},
    {"adam_beta1", K_FLOAT, OFF(adam_beta1), "0.9", NULL, 0, 0.999999, "Adam beta1"},
    {"adam_beta2", K_FLOAT, OFF(adam_beta2), "0.999", NULL, 0, 0.999999999, "Adam beta2"},
    {"adam_eps", K_FLOAT, OFF(adam_eps), "1e-15", NULL, 0, 1, "Adam epsilon"},
    {"densify_from", K_INT, OFF(densify_from), "500", NULL, 0, 1e9,
     "first iteration of densification"},
    {"densify_until", K_INT, OFF(densify_until), "15000", NULL, 0, 1e9,
     "no densification from this iteration on"},
    {"densify_every", K_INT, OFF(densify_every), "100", NULL, 1, 1e9,
     "densify every N iterations inside [from, until)"},
    {"grad_threshold", K_FLOAT, OFF(grad_threshold), "0.00016", NULL, 0, BIG,
     "mean 2D (NDC) position-gradient norm above which a Gaussian is cloned or split (gsplat: "
     "2e-4; 1.6e-4 with clone_opacity = share, gated with it)"},
    {"percent_dense", K_FLOAT, OFF(percent_dense), "0.01", NULL, 0, 1,
     "clone when the largest scale <= this times the extent, split otherwise"},
    {"prune_opacity", K_FLOAT, OFF(prune_opacity), "0.005", NULL, 0, 1,
     "prune Gaussians whose opacity falls below this"},
    {"prune_screen", K_INT, OFF(prune_screen), "0", NULL, 0, 1e6,
     "prune screen radius above this many pixels after prune_big_after (0 = off, as gsplat; "
     "the Inria code uses 20)"},
    {"prune_world", K_FLOAT, OFF(prune_world), "0.1", NULL, 0, BIG,
     "prune largest scale above this times the extent, after prune_big_after (0 = off)"},
    {"prune_big_after", K_INT, OFF(prune_big_after), "3000", NULL, 0, 1e9,
     "world- and screen-size pruning only after this iteration (gsplat and Inria: the opacity "
     "reset period, 3000)"},
    {"opacity_reset_every", K_INT, OFF(opacity_reset_every), "0", NULL, 0, 1e9,
     "reset opacities to 0.01 every N iterations while densifying (0 = never: gsplat 1.5.3, "
     "whose reset condition is always false; the Inria code uses 3000)"},
    {"opacity_reset_margin", K_INT, OFF(opacity_reset_margin), "0", NULL, 0, 1e9,
     "skip opacity resets with fewer than this many iterations left to recover (0 = skip none)"},
    {"densify_visible", K_ENUM, OFF(densify_visible), "radii", "radii|tiles", 0, 0,
     "views that count in the densification statistics: gsplat's radii > 0 (opacity >= 1/255 "
     "and the opacity-aware box meets the image) or any view where the splat touches a tile"},
    {"white_reset", K_INT, OFF(white_reset), "0", NULL, 0, 1,
     "1: also reset opacities at densify_from on white backgrounds (the Inria code; gsplat: 0)"},
    {"clone_opacity", K_ENUM, OFF(clone_opacity), "share", "copy|share", 0, 0,
     "a clone and its parent: copy = two exact copies (gsplat, the Inria code), the front one "
     "hiding the other; share = each takes 1 - sqrt(1 - opacity), compositing to the parent's"},
    {"max_splats", K_INT, OFF(max_splats), "0", NULL, 0, 1e9,
     "cap on the splat count during densification (0 = no cap)"},
    {"test_every", K_INT, OFF(test_every), "8", NULL, 2, 1e6,
     "hold out every Nth view for evaluation when the scene has no test split"},
    {"checkpoints", K_LIST, OFF(checkpoints), "[]", NULL, 0, 1e9,
     "iterations at which test-view PSNR is recorded in result.json (0 = the initial model)"},
    {"progress_every", K_INT, OFF(progress_every), "100", NULL, 1, 1e9,
     "iterations between --progress lines"},
    {"save_ply", K_INT, OFF(save_ply), "1", NULL, 0, 1, "write OUT/final.ply (1) or not (0)"},
    {"checkpoint_ply", K_INT, OFF(checkpoint_ply), "0", NULL, 0, 1,
     "also write OUT/checkpoint-ITER.ply at every checkpoint (1) or not (0)"},
    {"device", K_STR, OFF(device), "", NULL, 0, 0,
     "Vulkan device: name substring or index (empty = first suitable)"},
    {"timing", K_ENUM, OFF(timing), "production", "production|per_kernel", 0, 0,
     "production: one submission per iteration; per_kernel: one per stage (exact kernel times)"},
    {"in_flight", K_INT, OFF(in_flight), "2", NULL, 1, 2,
     "iterations on the GPU at once: 1 = record, submit and wait for each in turn; 2 = record and "
     "submit the next while the GPU runs this one (the same training bit for bit; timing: "
     "per_kernel and binning: transient take 1)"},
    {"binning", K_ENUM, OFF(binning), "resident", "resident|transient", 0, 0,
     "binning/sort buffers: grow-only arena, or allocated per iteration"},
    {"radix_passes", K_ENUM, OFF(radix_passes), "skip", "skip|full", 0, 0,
     "radix sort: skip all-zero high tile digits, or run all 16 passes"},
    {"radix_scatter", K_ENUM, OFF(radix_scatter), "ballot", "serial|ballot", 0, 0,
     "radix scatter: serial workgroup scan, or two-level subgroup ballot scan"},
    {"sigma_skip", K_ENUM, OFF(sigma_skip), "on", "off|on", 0, 0,
     "skip sigma >= 5.55 (alpha < 1/255) before exp, forward and backward"},
    {"fwd_accum", K_ENUM, OFF(fwd_accum), "f32", "f32|f16", 0, 0,
     "forward colour accumulator precision"},
    {"fwd_step", K_ENUM, OFF(fwd_step), "group", "branch|select|group|group8", 0, 0,
     "rasterize forward: a pixel that skips a splat branches past its step, or computes it "
     "with masks and selects (one straight-line step, the next splat's loads issued before this "
     "one's arithmetic), or that step 4 (group) or 8 (group8) splats at a time, their alphas "
     "first, then composited in order; the same image"},
    {"fwd_cull", K_ENUM, OFF(fwd_cull), "off", "off|rows", 0, 0,
     "rasterize forward: every pixel steps through every splat of its tile, or (rows) each pair "
     "of pixel rows only through the splats whose box reaches those rows (a mask per batch, "
     "built as the batch is staged); the same image"},
    {"fwd_stage", K_ENUM, OFF(fwd_stage), "prefetch", "direct|prefetch", 0, 0,
     "rasterize forward: each invocation loads its splat of a batch as the batch begins, or "
     "(prefetch) loads its splat of the next batch into registers before walking this one; the "
     "same image"},
    {"fwd_order", K_ENUM, OFF(fwd_order), "dense_first", "rows|dense_first", 0, 0,
     "rasterize forward: the tiles' workgroups start row by row, or (dense_first) the tiles with "
     "the most pairs first, so that the longest walks do not start last; the same image"},
    {"project_sh", K_ENUM, OFF(project_sh), "scalar", "scalar|vec4", 0, 0,
     "projection: each splat's 48 SH coefficients read a float at a time, or 16 bytes at a time "
     "(12 loads instead of 48); the same colours"},
    {"bwd_warp_skip", K_ENUM, OFF(bwd_warp_skip), "on", "off|on", 0, 0,
     "rasterize backward: skip a subgroup when no lane contributes (subgroupAny)"},
    {"ssim_walk", K_ENUM, OFF(ssim_walk), "float4", "scalar|float4|float4_recip", 0, 0,
     "SSIM window walk: per channel, 3 channels at once, or at once with a shared reciprocal"},
    {"atomic_spread", K_ENUM, OFF(atomic_spread), "lanes", "lane0|lanes", 0, 0,
     "rasterize backward: issue the per-splat atomics from lane 0, or from several lanes"},
    {"adam", K_ENUM, OFF(adam), "all", "all|visible", 0, 0,
     "Adam over every splat, or only over splats that received gradient this iteration"},
    {"deterministic", K_ENUM, OFF(deterministic), "off", "off|on", 0, 0,
     "on: a run is bit-identical to the next with the same config on the same device (the "
     "rasterize backward sums in 64-bit fixed point instead of float atomics)"},
    {"rasterize_bwd", K_ENUM, OFF(rasterize_bwd), "auto", "pixel|splat|auto", 0, 0,
     "rasterize backward: one thread per pixel with a subgroup sum per splat, or one lane per "
     "splat over runs of a tile's splats that the forward left the compositing state of; auto: "
     "splat where the device has fixed-size subgroups with relative shuffles, else pixel"},
    {"tile_cull", K_ENUM, OFF(tile_cull), "ellipse", "box|ellipse", 0, 0,
     "(splat, tile) pairs for every tile of the splat's box, or only for the tiles its ellipse "
     "meets (the same image and gradients, fewer pairs to sort and rasterize)"},
    {"ssim_layout", K_ENUM, OFF(ssim_layout), "planar", "interleaved|planar", 0, 0,
     "the SSIM passes' moment and derivative maps: a pixel's quantities side by side, or one "
     "plane per quantity (coalesced loads; the same values)"},
    {"sort", K_ENUM, OFF(sort), "depth_first", "pairs|depth_first", 0, 0,
     "binning's radix sort: the (tile, depth) pairs on the tile and depth bits (6 passes at "
     "2,500 tiles), or the splats by depth first (4 passes over the splats) and their pairs, "
     "emitted in that order, by tile alone (2 passes); the same order"},
    {"bwd_run_pixels", K_ENUM, OFF(bwd_run_pixels), "active", "rows|active|covered", 0, 0,
     "per-splat rasterize backward: a run of a tile's splats walks every pixel of the rows its "
     "splats reach, only the pixels inside their union box still compositing at its first "
     "splat (active), or only those of them inside at least one of its splats' boxes (covered); "
     "the same gradients, fewer steps"},
    {"bwd_step", K_ENUM, OFF(bwd_step), "dot", "branch|select|lean|dot", 0, 0,
     "per-splat rasterize backward: a lane that skips a pixel of the walk branches past its "
     "step, or computes it with its alpha masked to zero (one straight-line step, the next "
     "step's loads issued before this one's arithmetic), the same gradients; lean: select's "
     "step with fewer instructions (the pixel centre without an int-to-float conversion, one "
     "division instead of three, the 2D mean and conic terms summed as raw moments and "
     "multiplied by the conic once per splat), the same sums up to rounding; dot: lean's step "
     "carrying dot(colour so far, dL/dpix) and the transmittance from lane to lane instead of "
     "the colour and the transmittance (two shuffles fewer per step, fewer multiply-adds), the "
     "same sums as lean up to rounding"},
    {"bwd_drain", K_ENUM, OFF(bwd_drain), "full", "full|trim", 0, 0,
     "per-splat rasterize backward: a run's walk ends when its last lane has seen every pixel, "
     "or once every lane is past the last pixel of its splat's box (fewer steps where the run's "
     "last splats lie high in the tile); the same gradients"},
    {"bwd_state", K_ENUM, OFF(bwd_state), "global", "shared|global", 0, 0,
     "per-splat rasterize backward: the runs' stored compositing states are copied to shared "
     "memory for the walk, or read from the forward's buffer a block of a subgroup's width "
     "ahead and passed to the walk's first lane by a shuffle (16 KiB less shared memory per "
     "workgroup); the same gradients"},
    {"bwd_chain", K_ENUM, OFF(bwd_chain), "1", "1|2|4", 0, 0,
     "per-splat rasterize backward: runs of a tile's splats a subgroup walks back to back, the "
     "next run's pipeline filling while the last one's drains (2 or 4; needs bwd_step select, "
     "lean or dot); "
     "the same gradients"},
    {"project_adam", K_ENUM, OFF(project_adam), "separate", "separate|fused", 0, 0,
     "the projection backward writes every parameter gradient for the Adam kernel to read, or "
     "applies the Adam step itself from the gradients it holds in shared memory (one kernel, "
     "no gradient buffers; the same parameters and moments)"},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const struct key *find_key(const char *name) {
  for (size_t i = 0; i < NKEYS; i++)
    if (!strcmp(keys[i].name, name)) return &keys[i];
  return NULL;
}

/* Position of word in "a|b|c", or -1. */
static int enum_index(const char *enums, const char *word) {
  size_t wl = strlen(word);
  int idx = 0;
  const char *p = enums;
  for (;;) {
    const char *bar = strchr(p, '|');
    size_t l = bar ? (size_t)(bar - p) : strlen(p);
    if (l == wl && !strncmp(p, word, l)) return idx;
    if (!bar) return -1;
    p = bar + 1;
    idx++;
  }
}

const char *gs_config_enum_name(const char *key, int v) {
  static __thread char buf[64];
  const struct key *k = find_key(key);
  if (!k || k->type != K_ENUM || v < 0) return NULL;
  const char *p = k->enums;
  for (int i = 0; p; i++) {
    const char *bar = strchr(p, '|');
    size_t l = bar ? (size_t)(bar - p) : strlen(p);
    if (i == v) {
      if (l >= sizeof buf) l = sizeof buf - 1;
      memcpy(buf, p, l);
      buf[l] = 0;
      return buf;
    }
    p = bar ? bar + 1 : NULL;
  }
  return NULL;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t l = strlen(s);
  while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\n' || s[l - 1] == '\r'))
    s[--l] = 0;
  return s;
}

static int parse_int(const struct key *k, const char *v, int64_t *out, struct sw_err *err) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || end == v || *end) {
    /* Accept integral floats written as 1e3 or 7000.0, common in generated specs. */
    double d = strtod(v, &end);
    if (end == v || *end || d != floor(d) || !isfinite(d))
      return sw_err_set(err, SW_EINVAL, "config key '%s': '%s' is not an integer", k->name, v);
    /* Range check before the conversion: casting a double beyond long long's range (1e300) is
     * undefined behaviour. */
    if (d < k->lo || d > k->hi)
      return sw_err_set(err, SW_EINVAL, "config key '%s': %s is outside [%.17g, %.17g]", k->name, v,
                        k->lo, k->hi);
    x = (long long)d;
  }
  if ((double)x < k->lo || (double)x > k->hi)
    return sw_err_set(err, SW_EINVAL, "config key '%s': %lld is outside [%.17g, %.17g]", k->name, x,
                      k->lo, k->hi);
  *out = x;
  return 0;
}

static int set_value(struct gs_config *cfg, const struct key *k, const char *value,
                     struct sw_err *err) {
  char *base = (char *)cfg + k->off;
  char tmp[1024];
  if (strlen(value) >= sizeof tmp)
    return sw_err_set(err, SW_EINVAL, "config key '%s': value too long", k->name);
  strcpy(tmp, value);
  char *v = trim(tmp);
  switch (k->type) {
  case K_INT:
  case K_I64: {
    int64_t x;
    if (k->lo == 0 && k->hi == 1 && (!strcmp(v, "true") || !strcmp(v, "false")))
      v = !strcmp(v, "true") ? "1" : "0"; /* 0/1 switches (save_ply, checkpoint_ply, white_reset) */
    int rc = parse_int(k, v, &x, err);
    if (rc) return rc;
    if (k->type == K_INT)
      *(int32_t *)base = (int32_t)x;
    else
      *(int64_t *)base = x;
    return 0;
  }
  case K_FLOAT: {
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !isfinite(d))
      return sw_err_set(err, SW_EINVAL, "config key '%s': '%s' is not a number", k->name, v);
    if (d < k->lo || d > k->hi)
      return sw_err_set(err, SW_EINVAL, "config key '%s': %g is outside [%g, %g]", k->name, d,
                        k->lo, k->hi);
    *(double *)base = d;
    return 0;
  }
  case K_ENUM: {
    int idx = enum_index(k->enums, v);
    /* Specs written as YAML 1.2 carry switches as true/false; accept them for off|on keys. */
    if (idx < 0 && !strcmp(k->enums, "off|on")) {
      if (!strcmp(v, "true") || !strcmp(v, "1")) idx = 1;
      if (!strcmp(v, "false") || !strcmp(v, "0")) idx = 0;
    }
    if (idx < 0)
      return sw_err_set(err, SW_EINVAL, "config key '%s': '%s' is not one of %s", k->name, v,
                        k->enums);
    *(int32_t *)base = idx;
    return 0;
  }
  case K_STR:
    if (strlen(v) >= GS_CONFIG_STR_MAX)
      return sw_err_set(err, SW_EINVAL, "config key '%s': value too long", k->name);
    strcpy(base, v);
    return 0;
  case K_LIST: {
    int32_t vals[GS_CONFIG_MAX_CHECKPOINTS];
    int n = 0;
    char *s = v;
    size_t l = strlen(s);
    if (l && s[0] == '[') {
      if (s[l - 1] != ']')
        return sw_err_set(err, SW_EINVAL, "config key '%s': unbalanced '[' in '%s'", k->name, v);
      s[l - 1] = 0;
      s++;
    }
    char *save = NULL;
    for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      char *t = trim(tok);
      if (!*t) continue;
      if (n == GS_CONFIG_MAX_CHECKPOINTS)
        return sw_err_set(err, SW_EINVAL, "config key '%s': more than %d values", k->name,
                          GS_CONFIG_MAX_CHECKPOINTS);
      int64_t x;
      int rc = parse_int(k, t, &x, err);
      if (rc) return rc;
      vals[n++] = (int32_t)x;
    }
    /* Sorted ascending without duplicates, so the trainer can walk it once. */
    for (int i = 1; i < n; i++)
      for (int j = i; j > 0 && vals[j - 1] > vals[j]; j--) {
        int32_t t = vals[j];
        vals[j] = vals[j - 1];
        vals[j - 1] = t;
      }
    int m = 0;
    for (int i = 0; i < n; i++)
      if (!m || vals[m - 1] != vals[i]) vals[m++] = vals[i];
    memcpy(cfg->checkpoints, vals, sizeof(int32_t) * (size_t)m);
    cfg->n_checkpoints = m;
    return 0;
  }
  }
  return sw_err_set(err, SW_EINVAL, "config key '%s': unsupported type", k->name);
}

int gs_config_set(struct gs_config *cfg, const char *key, const char *value, struct sw_err *err) {
  const struct key *k = find_key(key);
  if (!k) return sw_err_set(err, SW_EINVAL, "unknown config key '%s'", key);
  return set_value(cfg, k, value ? value : "", err);
}

int gs_config_set_kv(struct gs_config *cfg, const char *kv, struct sw_err *err) {
  const char *eq = strchr(kv, '=');
  if (!eq || eq == kv) return sw_err_set(err, SW_EINVAL, "--set '%s': expected key=value", kv);
  char key[128];
  size_t l = (size_t)(eq - kv);
  if (l >= sizeof key) return sw_err_set(err, SW_EINVAL, "--set '%s': key too long", kv);
  memcpy(key, kv, l);
  key[l] = 0;
  return gs_config_set(cfg, trim(key), eq + 1, err);
}

void gs_config_defaults(struct gs_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  for (size_t i = 0; i < NKEYS; i++) {
    int rc = set_value(cfg, &keys[i], keys[i].def, NULL);
    (void)rc; /* defaults are checked by the unit test */
  }
}

/* Text of a YAML scalar node, or NULL. */
static const char *scalar(const struct sw_ynode *n, size_t *len) {
  if (!n || n->kind != SW_YSCALAR) return NULL;
  *len = n->len;
  return n->text;
}

/* Reads at most GS_CONFIG_FILE_MAX + 1 bytes of path, so that a device that never ends is not read
 * for ever; gs_config_load_yaml_text refuses the text when it is longer than the limit. *data is
 * NUL-terminated. */
static int read_config_file(const char *path, char **data, size_t *len, struct sw_err *err) {
  *data = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return sw_err_set(err, errno == ENOENT ? SW_ENOTFOUND : SW_EIO, "config file '%s': %s", path,
                      strerror(errno));
  char *buf = malloc(GS_CONFIG_FILE_MAX + 2);
  if (!buf) {
    fclose(f);
    return sw_err_set(err, SW_ENOMEM, "config file '%s': out of memory", path);
  }
  size_t n = fread(buf, 1, GS_CONFIG_FILE_MAX + 1, f);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return sw_err_set(err, SW_EIO, "config file '%s': read error", path);
  }
  buf[n] = 0;
  *data = buf;
  *len = n;
  return 0;
}

int gs_config_load_yaml(struct gs_config *cfg, const char *path, struct sw_err *err) {
  char *text = NULL;
  size_t len = 0;
  int rc = read_config_file(path, &text, &len, err);
  if (!rc) rc = gs_config_load_yaml_text(cfg, path, text, len, err);
  free(text);
  return rc;
}

int gs_config_load_yaml_text(struct gs_config *cfg, const char *path, const char *text, size_t len,
                             struct sw_err *err) {
  if (len > GS_CONFIG_FILE_MAX)
    return sw_err_set(err, SW_EINVAL, "%s:1:1: config file larger than %u bytes (the limit)", path,
                      (unsigned)GS_CONFIG_FILE_MAX);
  /* A config is a flat mapping of a few dozen keys; the limits keep a hostile file small. */
  const struct sw_ylimits lim = {GS_CONFIG_NODES_MAX, 8, 256, 64};
  struct sw_ydoc *doc = NULL;
  int rc = sw_yaml_load(path, text, len, &lim, &doc, err);
  if (rc) goto out;
  struct sw_ynode *root = doc->root;
  if (!root) goto out; /* an empty file (or only comments) sets nothing */
  if (root->kind != SW_YMAP) {
    rc = sw_err_set(err, SW_EINVAL, "%s:%d:%d: top level must be a mapping of key: value", path,
                    root->line, root->col);
    goto out;
  }
  for (size_t i = 0; i < root->n; i++) {
    const struct sw_ynode *kn = root->pairs[i].key, *vn = root->pairs[i].value;
    int line = kn->line, col = kn->col;
    size_t kl = 0;
    const char *ks = scalar(kn, &kl);
    char key[128];
    if (!ks || kl >= sizeof key) {
      rc = sw_err_set(err, SW_EINVAL, "%s:%d:%d: key must be a short scalar", path, line, col);
      goto out;
    }
    memcpy(key, ks, kl);
    key[kl] = 0;
    const struct key *k = find_key(key);
    if (!k) {
      rc = sw_err_set(err, SW_EINVAL, "%s:%d:%d: unknown config key '%s'", path, line, col, key);
      goto out;
    }
    char val[1024];
    size_t vl = 0;
    if (vn && vn->kind == SW_YSEQ && k->type == K_LIST) {
      val[0] = 0;
      for (size_t j = 0; j < vn->n; j++) {
        const struct sw_ynode *e = vn->items[j];
        size_t el = 0;
        const char *es = scalar(e, &el);
        if (!es || vl + el + 2 >= sizeof val) {
          line = e->line, col = e->col;
          rc = sw_err_set(err, SW_EINVAL, "%s:%d:%d: config key '%s': bad list element", path, line,
                          col, key);
          goto out;
        }
        memcpy(val + vl, es, el);
        vl += el;
        val[vl++] = ',';
        val[vl] = 0;
      }
    } else {
      const char *vs = vn ? scalar(vn, &vl) : "";
      if (!vn) vl = 0;
      if (!vs || vl >= sizeof val) {
        if (vn) line = vn->line, col = vn->col;
        rc = sw_err_set(err, SW_EINVAL, "%s:%d:%d: config key '%s': value must be a scalar%s", path,
                        line, col, key, k->type == K_LIST ? " or a list" : "");
        goto out;
      }
      memcpy(val, vs, vl);
      val[vl] = 0;
    }
    struct sw_err e2 = {0};
    rc = set_value(cfg, k, val, &e2);
    if (rc) {
      if (vn) line = vn->line, col = vn->col;
      sw_err_set(err, rc, "%s:%d:%d: %s", path, line, col, e2.msg);
      goto out;
    }
  }
out:
  sw_ydoc_free(doc);
  return rc;
}

int gs_config_validate(const struct gs_config *cfg, struct sw_err *err) {
  if (cfg->densify_from > cfg->densify_until)
    return sw_err_set(err, SW_EINVAL, "config: densify_from (%d) > densify_until (%d)",
                      cfg->densify_from, cfg->densify_until);
  if (cfg->lr_means_final > cfg->lr_means)
    return sw_err_set(err, SW_EINVAL, "config: lr_means_final (%g) > lr_means (%g)",
                      cfg->lr_means_final, cfg->lr_means);
  if (cfg->sh_every < 1) return sw_err_set(err, SW_EINVAL, "config: sh_every must be >= 1");
  if (cfg->bwd_chain != GS_BWD_CHAIN_1 && cfg->bwd_step == GS_BWD_STEP_BRANCH)
    return sw_err_set(err, SW_EINVAL,
                      "config: bwd_chain %s needs bwd_step select, lean or dot (it is branch)",
                      gs_config_enum_name("bwd_chain", cfg->bwd_chain));
  return 0;
}

static json_t *key_json(const struct gs_config *cfg, const struct key *k) {
  const char *base = (const char *)cfg + k->off;
  switch (k->type) {
  case K_INT: return json_integer(*(const int32_t *)base);
  case K_I64: return json_integer(*(const int64_t *)base);
  case K_FLOAT: return json_real(*(const double *)base);
  case K_ENUM: return json_string(gs_config_enum_name(k->name, *(const int32_t *)base));
  case K_STR: return json_string(base);
  case K_LIST: {
    json_t *a = json_array();
    for (int i = 0; i < cfg->n_checkpoints; i++)
      json_array_append_new(a, json_integer(cfg->checkpoints[i]));
    return a;
  }
  }
  return json_null();
}

char *gs_config_to_json(const struct gs_config *cfg) {
  json_t *o = json_object();
  if (!o) return NULL;
  for (size_t i = 0; i < NKEYS; i++) json_object_set_new(o, keys[i].name, key_json(cfg, &keys[i]));
  char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(15));
  json_decref(o);
  return s;
}

static const char *type_name(const struct key *k) {
  switch (k->type) {
  case K_INT:
  case K_I64: return "int";
  case K_FLOAT: return "float";
  case K_ENUM: return k->enums;
  case K_STR: return "string";
  case K_LIST: return "list of int";
  }
  return "?";
}

void gs_config_print_help(FILE *f) {
  fprintf(f, "# splat-train configuration keys (YAML via --config FILE, or --set key=value)\n");
  fprintf(f, "# %-20s %-28s %-12s %s\n", "key", "type", "default", "meaning");
  for (size_t i = 0; i < NKEYS; i++) {
    const struct key *k = &keys[i];
    fprintf(f, "%-22s %-28s %-12s %s\n", k->name, type_name(k), k->def[0] ? k->def : "\"\"",
            k->meaning);
  }
}

void gs_config_print_yaml(const struct gs_config *cfg, FILE *f) {
  for (size_t i = 0; i < NKEYS; i++) {
    const struct key *k = &keys[i];
    json_t *j = key_json(cfg, k);
    char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
    fprintf(f, "%s: %s  # %s\n", k->name, s ? s : "null", k->meaning);
    free(s);
    json_decref(j);
  }
}

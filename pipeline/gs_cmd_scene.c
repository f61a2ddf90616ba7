/* gs_cmd_scene.c: `splat-train scene`: generate an analytic scene in the NeRF-synthetic layout,
 * or as a COLMAP or transforms.json capture with a distorted lens (gs_gen.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cmd.h"
#include "gs_gen.h"
#include "sw_clock.h"

static void usage(FILE *f) {
  fprintf(f, "usage: splat-train scene --kind bricks|shapes --out DIR [--train-views N] "
             "[--test-views M] [--resolution R] [--seed S] [--threads T]\n"
             "       [--layout nerf|colmap-bin|colmap-txt|transforms] [--lens pinhole|distorted]\n"
             "  defaults: 100 train views, 20 test views (0 for the capture layouts), resolution "
             "256, seed 1, threads = CPUs, layout nerf, lens pinhole\n");
}

/* Parses an unsigned decimal option value; 0 on success. */
static int parse_u64(const char *flag, const char *s, uint64_t max, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || !end || *end || !*s || s[0] == '-' || v > max) {
    fprintf(stderr, "splat-train scene: %s wants an integer in 0..%llu, got '%s'\n", flag,
            (unsigned long long)max, s);
    return -1;
  }
  *out = v;
  return 0;
}

int gs_cmd_scene(int argc, char **argv) {
  struct gs_gen_opts o = {
      .kind = GS_GEN_BRICKS, .train_views = 100, .test_views = 20, .resolution = 256, .seed = 1};
  const char *kind = NULL, *out = NULL, *layout = NULL, *lens = NULL;
  int test_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return GS_EXIT_OK;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "splat-train scene: '%s' needs a value (or is unknown)\n", a);
      usage(stderr);
      return GS_EXIT_USAGE;
    }
    const char *v = argv[++i];
    uint64_t n = 0;
    if (!strcmp(a, "--kind"))
      kind = v;
    else if (!strcmp(a, "--out"))
      out = v;
    else if (!strcmp(a, "--layout"))
      layout = v;
    else if (!strcmp(a, "--lens"))
      lens = v;
    else if (!strcmp(a, "--train-views")) {
      if (parse_u64(a, v, 100000, &n)) return GS_EXIT_USAGE;
      o.train_views = (uint32_t)n;
    } else if (!strcmp(a, "--test-views")) {
      if (parse_u64(a, v, 100000, &n)) return GS_EXIT_USAGE;
      o.test_views = (uint32_t)n;
      test_given = 1;
    } else if (!strcmp(a, "--resolution")) {
      if (parse_u64(a, v, 4096, &n)) return GS_EXIT_USAGE;
      o.resolution = (uint32_t)n;
    } else if (!strcmp(a, "--seed")) {
      if (parse_u64(a, v, UINT64_MAX, &n)) return GS_EXIT_USAGE;
      o.seed = n;
    } else if (!strcmp(a, "--threads")) {
      if (parse_u64(a, v, 64, &n)) return GS_EXIT_USAGE;
      o.threads = (int)n;
    } else {
      fprintf(stderr, "splat-train scene: unknown option '%s'\n", a);
      usage(stderr);
      return GS_EXIT_USAGE;
    }
  }
  struct sw_err err = {0};
  if (!out) {
    fprintf(stderr, "splat-train scene: --out DIR is required\n");
    usage(stderr);
    return GS_EXIT_USAGE;
  }
  if (kind && gs_gen_kind_parse(kind, &o.kind, &err)) {
    fprintf(stderr, "splat-train scene: %s\n", err.msg);
    return GS_EXIT_USAGE;
  }
  if ((layout && gs_gen_layout_parse(layout, &o.layout, &err)) ||
      (lens && gs_gen_lens_parse(lens, &o.lens, &err))) {
    fprintf(stderr, "splat-train scene: %s\n", err.msg);
    return GS_EXIT_USAGE;
  }
  if (o.layout != GS_GEN_LAYOUT_NERF && !test_given) o.test_views = 0;
  int64_t t0 = sw_clock_mono_ns();
  int rc = gs_gen_scene(out, &o, &err);
  if (rc) {
    fprintf(stderr, "splat-train scene: %s\n", err.msg);
    return rc == SW_EINVAL ? GS_EXIT_USAGE : 1;
  }
  printf("scene %s: kind %s, %u train + %u test views, %ux%u, seed %llu, %.2f s\n", out,
         gs_gen_kind_name(o.kind), o.train_views, o.test_views, o.resolution, o.resolution,
         (unsigned long long)o.seed, (double)(sw_clock_mono_ns() - t0) * 1e-9);
  return GS_EXIT_OK;
}

/* test_gpu_sort.c: Check suite for the GPU radix sort and scan (gs_sort) against a CPU stable sort
 * on the default Vulkan device (lavapipe in CI): sizes 0, 1, 255, 256, 257, 1234, 100000 and keys
 * with many duplicates, for both scatter variants and both pass modes; plus device errors
 * (no matching device, an injected allocation failure) that must come back as clear errors, and
 * gs_vk's batched host copies (gs_vk_buf_copy), mapped and through staging. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_sort.h"
#include "gs_vk.h"
#include "sw_fs.h"

static gs_vk_t *vk;

static void setup(void) {
  struct sw_err err = {0};
  struct gs_vk_opts opts = {.pipeline_cache = ""};
  if (gs_vk_open(&vk, &opts, &err)) ck_abort_msg("opening the device: %s", err.msg);
}

static void teardown(void) { gs_vk_close(&vk); }

static uint64_t rng_next(uint64_t *s) {
  /* splitmix64: a fixed sequence for reproducible inputs */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct kv {
  uint64_t k;
  uint32_t v;
};

static int cmp_kv(const void *a, const void *b) {
  const struct kv *x = a, *y = b;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v; /* values are the input order: stability */
}

/* Keys shaped like forward keys: high word below max_hi, low word any 32 bits (or few distinct
 * values when dup is set, so that stability matters). Values are the input positions. */
static void check_sort(enum gs_sort_scatter scatter, int full, uint32_t n, uint32_t max_hi,
                       int dup) {
  struct sw_err err = {0};
  gs_sort_t *s;
  ck_assert_msg(gs_sort_new(vk, scatter, &s, &err) == 0, "%s", err.msg);
  uint64_t seed = 1234 + n + 7 * (uint64_t)dup;
  uint64_t *keys = malloc(8ull * (n ? n : 1));
  uint32_t *vals = malloc(4ull * (n ? n : 1));
  struct kv *ref = malloc(sizeof *ref * (n ? n : 1));
  for (uint32_t i = 0; i < n; i++) {
    uint64_t r = rng_next(&seed);
    uint32_t hi = (uint32_t)(r >> 32) % (max_hi + 1);
    uint32_t lo = dup ? (uint32_t)(r % 5) * 0x3f800000u : (uint32_t)r;
    keys[i] = (uint64_t)hi << 32 | lo;
    vals[i] = i;
    ref[i] = (struct kv){keys[i], i};
  }
  qsort(ref, n, sizeof *ref, cmp_kv);
  uint32_t bits = full ? 64 : gs_sort_key_bits(max_hi);
  ck_assert_msg(gs_sort_run(s, keys, vals, n, bits, NULL, &err) == 0, "%s", err.msg);
  for (uint32_t i = 0; i < n; i++) {
    if (keys[i] != ref[i].k || vals[i] != ref[i].v)
      ck_abort_msg("%s %s n=%u: element %u is (%llx, %u), expected (%llx, %u)",
                   scatter ? "ballot" : "serial", full ? "full" : "skip", n, i,
                   (unsigned long long)keys[i], vals[i], (unsigned long long)ref[i].k, ref[i].v);
  }
  free(keys);
  free(vals);
  free(ref);
  gs_sort_destroy(&s);
}

static const uint32_t sizes[] = {0, 1, 255, 256, 257, 1234, 100000};

START_TEST(sort_sizes) {
  /* _i walks variants x pass modes: 0 serial/skip, 1 serial/full, 2 ballot/skip, 3 ballot/full */
  enum gs_sort_scatter sc = _i >= 2 ? GS_SORT_SCATTER_BALLOT : GS_SORT_SCATTER_SERIAL;
  int full = _i & 1;
  for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
    check_sort(sc, full, sizes[j], 2499, 0);
}
END_TEST

START_TEST(sort_many_equal_keys) {
  enum gs_sort_scatter sc = _i >= 2 ? GS_SORT_SCATTER_BALLOT : GS_SORT_SCATTER_SERIAL;
  int full = _i & 1;
  check_sort(sc, full, 20000, 3, 1);    /* 4 tiles x 5 depths: long runs of equal keys */
  check_sort(sc, full, 5000, 0, 1);     /* one tile */
  check_sort(sc, full, 3000, 70000, 0); /* tile ids past 16 bits: 3 high passes */
}
END_TEST

/* The scatter's modules and paths: the default depends on the device (lavapipe, 32 subgroups of
 * 8 lanes: staged blocks, ballot ranks taking turns per subgroup; NVIDIA: staged, table); these
 * force the others. _i: 0 flat module (the ballot table has 32 rows: used on lavapipe), 1 flat with
 * the table limited to one row (turn-taking), 2 staged with one row. */
START_TEST(scatter_layouts_agree) {
  const char *staged[3] = {"0", "0", "1"}, *rows[3] = {NULL, "1", "1"};
  setenv("GS_SORT_STAGED", staged[_i], 1);
  if (rows[_i]) setenv("GS_SORT_TABLE_ROWS", rows[_i], 1);
  for (int sc = 0; sc < 2; sc++) {
    check_sort((enum gs_sort_scatter)sc, 0, 1234, 2499, 0);
    check_sort((enum gs_sort_scatter)sc, 0, 5000, 3, 1);
    check_sort((enum gs_sort_scatter)sc, 1, 30000, 2499, 0);
  }
  unsetenv("GS_SORT_STAGED");
  unsetenv("GS_SORT_TABLE_ROWS");
}
END_TEST

START_TEST(scan_matches_cpu) {
  struct sw_err err = {0};
  gs_scan_t *sc;
  ck_assert_msg(gs_scan_new(vk, &sc, &err) == 0, "%s", err.msg);
  const uint32_t ns[] = {1, 1023, 1024, 1025, 300000, 1100000};
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
    uint32_t n = ns[t];
    uint32_t *a = malloc(4ull * n), *b = malloc(4ull * n);
    uint64_t seed = n;
    for (uint32_t i = 0; i < n; i++) a[i] = (uint32_t)(rng_next(&seed) % 7);
    struct gs_vk_buf *buf;
    ck_assert_int_eq(gs_scan_reserve(sc, n, &err), 0);
    ck_assert_int_eq(gs_vk_buf_new(vk, 4ull * n, 0, "scan_test", &buf, &err), 0);
    ck_assert_int_eq(gs_vk_buf_upload(buf, 0, a, 4ull * n, &err), 0);
    VkCommandBuffer cmd;
    ck_assert_int_eq(gs_vk_cmd_begin(vk, &cmd, &err), 0);
    gs_scan_record(sc, cmd, buf, n);
    ck_assert_msg(gs_vk_cmd_submit_wait(vk, &cmd, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(gs_vk_buf_download(buf, 0, b, 4ull * n, &err), 0);
    uint32_t run = 0;
    for (uint32_t i = 0; i < n; i++) {
      run += a[i];
      if (b[i] != run) ck_abort_msg("scan n=%u: element %u is %u, expected %u", n, i, b[i], run);
    }
    gs_vk_buf_destroy(&buf);
    free(a);
    free(b);
  }
  gs_scan_destroy(&sc);
}
END_TEST

START_TEST(timer_reports_sort_stage) {
  struct sw_err err = {0};
  gs_sort_t *s;
  gs_vk_timer_t *t;
  ck_assert_int_eq(gs_sort_new(vk, GS_SORT_SCATTER_BALLOT, &s, &err), 0);
  ck_assert_msg(gs_vk_timer_new(vk, 4, &t, &err) == 0, "%s", err.msg);
  uint32_t n = 5000;
  uint64_t *k = malloc(8ull * n);
  uint32_t *v = malloc(4ull * n);
  uint64_t seed = 9;
  for (uint32_t i = 0; i < n; i++) {
    k[i] = rng_next(&seed);
    v[i] = i;
  }
  for (int rep = 0; rep < 2; rep++)
    ck_assert_msg(gs_sort_run(s, k, v, n, 64, t, &err) == 0, "%s", err.msg);
  const struct gs_vk_stage_stats *st;
  uint32_t ns;
  double busy;
  gs_vk_timer_summary(t, &st, &ns, &busy);
  ck_assert_uint_eq(ns, 1);
  ck_assert_str_eq(st[0].name, "radix_sort");
  ck_assert_uint_eq(st[0].calls, 2);
  ck_assert(st[0].gpu_ms > 0);
  ck_assert(busy > 0);
  ck_assert_double_eq_tol(st[0].share, 1.0, 1e-9);
  for (uint32_t i = 1; i < n; i++) ck_assert(k[i - 1] <= k[i]);
  /* A query set the timer does not have is an error at the next collect, not a silent share
   * of set 0 (bench/iter_bench.c had two submissions in flight on a one-set timer). */
  gs_vk_timer_use(t, 1);
  ck_assert_int_ne(gs_sort_run(s, k, v, n, 64, t, &err), 0);
  ck_assert_msg(strstr(err.msg, "query set 1 used, but the timer has 1"), "%s", err.msg);
  free(k);
  free(v);
  gs_vk_timer_destroy(&t);
  gs_sort_destroy(&s);
}
END_TEST

START_TEST(no_matching_device_is_a_clear_error) {
  struct sw_err err = {0};
  gs_vk_t *v2 = NULL;
  struct gs_vk_opts opts = {.device = "no-such-gpu-xyz", .pipeline_cache = ""};
  ck_assert_int_eq(gs_vk_open(&v2, &opts, &err), SW_ENOTFOUND);
  ck_assert_ptr_null(v2);
  ck_assert_msg(strstr(err.msg, "no-such-gpu-xyz") != NULL, "%s", err.msg);
  sw_err_clear(&err);
  opts.device = "99";
  ck_assert_int_eq(gs_vk_open(&v2, &opts, &err), SW_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "out of range") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(allocation_failure_is_a_clear_error) {
  struct sw_err err = {0};
  gs_vk_t *v2 = NULL;
  struct gs_vk_opts opts = {.pipeline_cache = ""};
  /* The sort allocates a counters buffer, then on reserve its scratch: fail the third buffer. */
  setenv("GS_VK_FAIL_ALLOC", "3", 1);
  int rc = gs_vk_open(&v2, &opts, &err);
  unsetenv("GS_VK_FAIL_ALLOC");
  ck_assert_msg(rc == 0, "%s", err.msg);
  gs_sort_t *s;
  ck_assert_int_eq(gs_sort_new(v2, GS_SORT_SCATTER_SERIAL, &s, &err), 0);
  uint64_t k[4] = {3, 2, 1, 0};
  uint32_t v[4] = {0, 1, 2, 3};
  ck_assert_int_eq(gs_sort_run(s, k, v, 4, 64, NULL, &err), SW_EDEVICE);
  ck_assert_msg(strstr(err.msg, "GS_VK_FAIL_ALLOC") && strstr(err.msg, "GPU sort of 4 keys"), "%s",
                err.msg);
  /* The context stays usable after the failure. */
  sw_err_clear(&err);
  ck_assert_msg(gs_sort_run(s, k, v, 4, 64, NULL, &err) == 0, "%s", err.msg);
  ck_assert(k[0] == 0 && k[3] == 3 && v[0] == 3);
  gs_sort_destroy(&s);
  gs_vk_close(&v2);
}
END_TEST

/* gs_vk_buf_copy: pieces at offsets of several buffers go up and come back in one batch, the zero
 * buffer is cleared, and a piece outside its buffer is refused before anything is copied; on a
 * mapped context and through staging. */
START_TEST(batched_copies_mapped_and_staged) {
  for (int staged = 0; staged < 2; staged++) {
    struct sw_err err = {0};
    gs_vk_t *v2 = NULL;
    struct gs_vk_opts opts = {.pipeline_cache = "", .force_staging = staged};
    ck_assert_msg(gs_vk_open(&v2, &opts, &err) == 0, "%s", err.msg);
    struct gs_vk_buf *a = NULL, *b = NULL, *z = NULL;
    ck_assert_int_eq(gs_vk_buf_ensure(v2, &a, 4000, 0, "a", &err), 0);
    ck_assert_int_eq(gs_vk_buf_ensure(v2, &b, 300, 0, "b", &err), 0);
    ck_assert_int_eq(gs_vk_buf_ensure(v2, &z, 64, 0, "z", &err), 0);
    if (staged) ck_assert(!a->map); /* the discrete GPUs' path */
    ck_assert_int_eq(gs_vk_buf_fill(z, 0xdeadbeefu, &err), 0);
    uint32_t in_a[1000], in_b[75], out_a[1000] = {0}, out_b[75] = {0}, out_z[16];
    for (uint32_t i = 0; i < 1000; i++) in_a[i] = 7 * i + 1;
    for (uint32_t i = 0; i < 75; i++) in_b[i] = 0xb0000000u + i;
    struct gs_vk_copy up[3] = {{a, 0, 1200, in_a}, {b, 4, 296, in_b}, {a, 1200, 2800, in_a + 300}};
    ck_assert_msg(gs_vk_buf_copy(v2, 1, up, 3, z, &err) == 0, "%s", err.msg);
    struct gs_vk_copy down[3] = {{b, 4, 296, out_b}, {a, 0, 4000, out_a}, {z, 0, 64, out_z}};
    ck_assert_msg(gs_vk_buf_copy(v2, 0, down, 3, NULL, &err) == 0, "%s", err.msg);
    ck_assert_mem_eq(out_a, in_a, 4000);
    ck_assert_mem_eq(out_b, in_b, 296);
    for (int i = 0; i < 16; i++) ck_assert_uint_eq(out_z[i], 0);
    struct gs_vk_copy bad[2] = {{a, 0, 4, in_b}, {b, 200, 101, in_b}};
    ck_assert_int_eq(gs_vk_buf_copy(v2, 1, bad, 2, NULL, &err), SW_EINVAL);
    ck_assert_msg(strstr(err.msg, "buffer 'b'") != NULL, "%s", err.msg);
    ck_assert_int_eq(gs_vk_buf_download(a, 0, out_a, 4, &err), 0);
    ck_assert_uint_eq(out_a[0], in_a[0]); /* the refused batch copied nothing */
    gs_vk_buf_destroy(&a);
    gs_vk_buf_destroy(&b);
    gs_vk_buf_destroy(&z);
    gs_vk_close(&v2);
  }
}
END_TEST

START_TEST(staging_path_sorts_too) {
  struct sw_err err = {0};
  gs_vk_t *v2 = NULL;
  struct gs_vk_opts opts = {.pipeline_cache = "", .force_staging = 1};
  ck_assert_msg(gs_vk_open(&v2, &opts, &err) == 0, "%s", err.msg);
  gs_sort_t *s;
  ck_assert_int_eq(gs_sort_new(v2, GS_SORT_SCATTER_BALLOT, &s, &err), 0);
  uint32_t n = 3000;
  uint64_t *k = malloc(8ull * n), seed = 5;
  uint32_t *v = malloc(4ull * n);
  for (uint32_t i = 0; i < n; i++) {
    k[i] = rng_next(&seed) % 1000;
    v[i] = i;
  }
  ck_assert_msg(gs_sort_run(s, k, v, n, 64, NULL, &err) == 0, "%s", err.msg);
  for (uint32_t i = 1; i < n; i++)
    ck_assert(k[i - 1] < k[i] || (k[i - 1] == k[i] && v[i - 1] < v[i]));
  free(k);
  free(v);
  gs_sort_destroy(&s);
  gs_vk_close(&v2);
}
END_TEST

START_TEST(pipeline_cache_round_trip) {
  char dir[] = "/tmp/gs_vk_cacheXXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/sub/pipeline.bin", dir);
  struct sw_err err = {0};
  for (int round = 0; round < 3; round++) {
    if (round == 2) {
      /* A damaged cache file is ignored, not an error. */
      FILE *f = fopen(path, "wb");
      ck_assert_ptr_nonnull(f);
      fputs("not a pipeline cache", f);
      fclose(f);
    }
    gs_vk_t *v2 = NULL;
    struct gs_vk_opts opts = {.pipeline_cache = path};
    ck_assert_msg(gs_vk_open(&v2, &opts, &err) == 0, "%s", err.msg);
    gs_sort_t *s;
    ck_assert_msg(gs_sort_new(v2, GS_SORT_SCATTER_BALLOT, &s, &err) == 0, "%s", err.msg);
    uint64_t k[3] = {9, 1, 5};
    uint32_t v[3] = {0, 1, 2};
    ck_assert_msg(gs_sort_run(s, k, v, 3, 64, NULL, &err) == 0, "%s", err.msg);
    ck_assert(k[0] == 1 && k[1] == 5 && k[2] == 9 && v[0] == 1);
    gs_sort_destroy(&s);
    gs_vk_close(&v2);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "the pipeline cache was not saved to %s", path);
    fseek(f, 0, SEEK_END);
    ck_assert(ftell(f) >= 32); /* at least the header; lavapipe stores no pipelines */
    fclose(f);
  }
  struct sw_err e2 = {0};
  ck_assert_int_eq(sw_fs_rm_rf(dir, &e2), 0);
}
END_TEST

START_TEST(shader_hash_is_exposed) {
  const char *h = gs_shaders_sha256();
  ck_assert_uint_eq(strlen(h), 64);
  for (int i = 0; i < 64; i++) ck_assert(strchr("0123456789abcdef", h[i]) != NULL);
}
END_TEST

/* Runs without the fixture: the loader must not have been opened in this (forked) process. */
START_TEST(missing_loader_is_a_clear_error) {
  setenv("GS_VULKAN_LOADER", "/nonexistent/libvulkan.so.1", 1);
  struct sw_err err = {0};
  gs_vk_t *v2 = NULL;
  ck_assert_int_eq(gs_vk_open(&v2, NULL, &err), SW_EDEVICE);
  ck_assert_ptr_null(v2);
  ck_assert_msg(strstr(err.msg, "no Vulkan loader") && strstr(err.msg, "libvulkan1"), "%s",
                err.msg);
  struct gs_vk_device_info *d = NULL;
  uint32_t n = 7;
  sw_err_clear(&err);
  ck_assert_int_eq(gs_vk_list_devices(&d, &n, &err), SW_EDEVICE);
  ck_assert_uint_eq(n, 0);
  unsetenv("GS_VULKAN_LOADER");
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu_sort");
  TCase *tc = tcase_create("lavapipe");
  tcase_set_timeout(tc, 120); /* a CPU device is slow; ctest's CK_DEFAULT_TIMEOUT is larger */
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, sort_sizes, 0, 4);
  tcase_add_loop_test(tc, sort_many_equal_keys, 0, 4);
  tcase_add_loop_test(tc, scatter_layouts_agree, 0, 3);
  tcase_add_test(tc, scan_matches_cpu);
  tcase_add_test(tc, timer_reports_sort_stage);
  tcase_add_test(tc, no_matching_device_is_a_clear_error);
  tcase_add_test(tc, allocation_failure_is_a_clear_error);
  tcase_add_test(tc, staging_path_sorts_too);
  tcase_add_test(tc, batched_copies_mapped_and_staged);
  tcase_add_test(tc, pipeline_cache_round_trip);
  tcase_add_test(tc, shader_hash_is_exposed);
  suite_add_tcase(s, tc);
  TCase *bare = tcase_create("no_loader");
  tcase_add_test(bare, missing_loader_is_a_clear_error);
  suite_add_tcase(s, bare);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

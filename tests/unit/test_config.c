/* test_config.c: the trainer's config file loader (gs_config_load_yaml, `splat-train train
 * --config FILE`) on what a user or a hostile file can hand it: every refusal names FILE:LINE:COL,
 * including texts that crashed the YAML parser used before libyaml (sw_yaml.h). No GPU. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_config.h"

static char path[64];

static void setup(void) {
  snprintf(path, sizeof path, "/tmp/test_config_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

static void teardown(void) { unlink(path); }

static void write_file(const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(text, 1, len, f), len);
  fclose(f);
}

/* Loads text as a config file into defaults; returns what the loader returned. */
static int load(const char *text, struct gs_config *c, struct sw_err *err) {
  write_file(text, strlen(text));
  gs_config_defaults(c);
  memset(err, 0, sizeof *err);
  return gs_config_load_yaml(c, path, err);
}

/* The file is refused with SW_EINVAL and the message is "PATH:want...". */
static void refused(const char *text, const char *want) {
  struct gs_config c;
  struct sw_err err;
  ck_assert_int_eq(load(text, &c, &err), SW_EINVAL);
  char full[256];
  snprintf(full, sizeof full, "%s:%s", path, want);
  ck_assert_msg(strncmp(err.msg, full, strlen(full)) == 0, "got '%s', want '%s...'", err.msg, full);
}

START_TEST(loads_keys_and_lists) {
  struct gs_config c;
  struct sw_err err;
  ck_assert_int_eq(load("iterations: 1234\ncheckpoints:\n  - 500\n  - 1000\nssim_layout: "
                        "interleaved\n",
                        &c, &err),
                   0);
  ck_assert_int_eq(c.iterations, 1234);
  ck_assert_int_eq(c.n_checkpoints, 2);
  ck_assert_int_eq(c.ssim_layout, GS_SSIM_LAYOUT_INTERLEAVED);
  /* Windows line ends, and old Mac ones, read as the same config. */
  ck_assert_int_eq(load("iterations: 77\r\nseed: 5\r\ntile_cull: box\r\n", &c, &err), 0);
  ck_assert_int_eq(c.iterations, 77);
  ck_assert_int_eq(c.seed, 5);
  ck_assert_int_eq(c.tile_cull, GS_TILE_CULL_BOX);
  ck_assert_int_eq(load("iterations: 78\rseed: 6\r", &c, &err), 0);
  ck_assert_int_eq(c.iterations, 78);
  ck_assert_int_eq(c.seed, 6);
  /* An empty file sets nothing. */
  ck_assert_int_eq(load("", &c, &err), 0);
  ck_assert_int_eq(c.iterations, 30000);
  ck_assert_int_eq(load("# nothing but a comment\n", &c, &err), 0);
  ck_assert_int_eq(c.iterations, 30000);
}
END_TEST

START_TEST(refusals_are_positioned) {
  refused("iterations: 5\nbogus_key: 1\n", "2:1: unknown config key 'bogus_key'");
  refused("iterations: 5\r\n\r\nbogus_key: 1\r\n", "3:1: unknown config key 'bogus_key'");
  /* A syntax error, where libyaml saw it (the end of the text), with where the construct began. */
  refused("iterations: [1, 2\n",
          "2:1: YAML: did not find expected ',' or ']' (while parsing a flow sequence at 1:13)");
  refused("- 1\n- 2\n", "1:1: top level must be a mapping"); /* where the sequence starts */
  refused("seed: x\n", "1:7: config key 'seed'");
  /* A collection where a scalar belongs, or a list with a bad value: where the collection
   * starts. */
  refused("iterations: 5\nseed: {a: 1}\n", "2:7: config key 'seed': value must be a scalar");
  refused("iterations: 5\ncheckpoints: [x, 2]\n", "2:14: config key 'checkpoints'");
  /* A key twice, a second document, an alias to nothing, too many nodes. */
  refused("seed: 1\nseed: 2\n", "2:1: YAML: duplicate key 'seed' (first at line 1)");
  refused("seed: 1\n---\nseed: 2\n", "2:1: a second YAML document starts here");
  refused("seed: *s\n", "1:7: YAML: alias '*s' names no anchor before it");
  /* Positions count CR LF and lone CR line ends as YAML does, also for bad UTF-8. */
  refused("seed: 1\r%YAML \xa5\n", "2:7: not UTF-8 text (byte 0xa5)");
  refused("seed: 1\r\n%YAML \xa5\n", "2:7: not UTF-8 text (byte 0xa5)");
  /* Control characters YAML does not allow in its text (a NUL, say) are refused where they are. */
  refused("seed: 1\ntile_cull: b\x01ox\n", "2:13: YAML: control characters are not allowed");
  /* Texts that crashed libfyaml 0.7.12, the parser before libyaml (found by the config fuzzer
   * against an instrumented build; tests/fuzz/corpus/config/fyaml_*): a double-quoted scalar
   * that ends in a backslash at the end of the text, and tabs around a mapping key. */
  refused("sl_out:se&ed: \"checkpoi%\\", "1:");
  refused("?\r \t\t\t\t\t\t\t\t\t\t\t\t\t   \t\t\tseed:   \t\n", "2:2: YAML:");
  /* Escaped quotes in a row in a single-quoted scalar read as YAML says. */
  struct gs_config c;
  struct sw_err err;
  ck_assert_int_eq(load("tile_cull: 'box'\nseed: '1''''2'\n", &c, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "1''2") != NULL, "'1''''2' read as something else: %s", err.msg);
  ck_assert_int_eq(load("tile_cull: \"ellipse\"\n", &c, &err), 0);
  /* Text that is not UTF-8 (libfyaml looped for ever on some of it in a directive line). */
  refused("seed: 1\n%YAML \xa5\n", "2:7: not UTF-8 text (byte 0xa5)");
}
END_TEST

START_TEST(size_is_bounded) {
  /* A file over the limit is refused without being read to its end; so is a device that never
   * ends (read for ever before the limit existed). */
  size_t n = GS_CONFIG_FILE_MAX + 1;
  char *big = malloc(n);
  ck_assert_ptr_nonnull(big);
  memset(big, '#', n);
  write_file(big, n);
  free(big);
  struct gs_config c;
  gs_config_defaults(&c);
  struct sw_err err = {0};
  ck_assert_int_eq(gs_config_load_yaml(&c, path, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "larger than") != NULL, "%s", err.msg);
  sw_err_clear(&err);
  ck_assert_int_eq(gs_config_load_yaml(&c, "/dev/zero", &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "/dev/zero:1:1: config file larger than") != NULL, "%s", err.msg);
  sw_err_clear(&err);
  ck_assert_int_eq(gs_config_load_yaml(&c, "/nonexistent/x.yaml", &err), SW_ENOTFOUND);
  /* Within the size, the YAML limits (sw_yaml_load) hold: 4,096 nodes, 8 levels of nesting, an
   * alias bomb refused at the alias without being expanded. */
  size_t cap = 16 * 4100;
  char *many = malloc(cap);
  ck_assert_ptr_nonnull(many);
  size_t off = (size_t)snprintf(many, cap, "checkpoints: [");
  for (int i = 0; i < 4096; i++)
    off += (size_t)snprintf(many + off, cap - off, "%s1", i ? "," : "");
  snprintf(many + off, cap - off, "]\n");
  refused(many, "1:");
  ck_assert_int_eq(load(many, &c, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "YAML: more than 4096 YAML nodes (the limit)"), "%s", err.msg);
  free(many);
  refused("seed: [[[[[[[[1]]]]]]]]\n", "1:14: YAML: nested deeper than 8 levels (the limit)");
  refused("a: &a [1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
          "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
          "seed: [*d, *d]\n",
          "4:28: alias '*c' expands the document: more than 4096 YAML nodes (the limit)");
}
END_TEST

int main(void) {
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("file");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, loads_keys_and_lists);
  tcase_add_test(tc, refusals_are_positioned);
  tcase_add_test(tc, size_is_bounded);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

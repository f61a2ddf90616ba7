/* test_sweep_configs.c: every run of every shipped sweep (every YAML file in sweeps/) resolves to a
 * trainer configuration that the builtin trainer accepts: each `--set key=value` of each arm / grid
 * point goes through splat-train's own gs_config_set and the result through
 * gs_config_validate. This keeps the specs and the trainer's key table from drifting apart. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_config.h"
#include "sw_spec.h"

/* Applies a resolved config the way the worker's builtin runner does (--set in order). */
static void accept_config(const char *path, const char *what, const struct sw_spec *s,
                          const struct sw_spec_config *cfg) {
  struct gs_config g;
  gs_config_defaults(&g);
  struct sw_err err = {0};
  if (s->trainer.device) {
    ck_assert_msg(gs_config_set(&g, "device", s->trainer.device, &err) == 0, "%s: %s", path,
                  err.msg);
  }
  for (size_t i = 0; i < s->trainer.options.n; i++) {
    const struct sw_spec_kv *kv = &s->trainer.options.items[i];
    ck_assert_msg(gs_config_set(&g, kv->key, kv->text, &err) == 0, "%s: trainer.builtin: %s", path,
                  err.msg);
  }
  for (size_t i = 0; i < cfg->n; i++) {
    const struct sw_spec_kv *kv = &cfg->items[i];
    ck_assert_msg(gs_config_set(&g, kv->key, kv->text, &err) == 0, "%s %s: --set %s=%s: %s", path,
                  what, kv->key, kv->text, err.msg);
  }
  ck_assert_msg(gs_config_validate(&g, &err) == 0, "%s %s: %s", path, what, err.msg);
}

START_TEST(every_sweep_run_is_a_valid_trainer_config) {
  DIR *d = opendir(SW_SOURCE_DIR "/sweeps");
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  int files = 0, runs = 0;
  char path[4096];
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".yaml")) continue;
    snprintf(path, sizeof path, "%s/sweeps/%s", SW_SOURCE_DIR, e->d_name);
    struct sw_spec *s = NULL;
    struct sw_err err = {0};
    ck_assert_msg(sw_spec_load_file(path, &s, &err) == 0, "%s", err.msg);
    files++;
    if (s->trainer.kind != SW_TRAINER_BUILTIN) {
      sw_spec_destroy(&s);
      continue;
    }
    struct sw_spec_config c;
    if (s->kind == SW_SPEC_GATE) {
      const char *arms[] = {"off", "on"};
      for (int a = 0; a < 2; a++, runs++) {
        ck_assert_int_eq(sw_spec_resolve_arm(s, arms[a], &c, &err), 0);
        accept_config(path, arms[a], s, &c);
        sw_spec_config_clear(&c);
      }
    } else {
      struct sw_spec_point *pts = NULL;
      size_t n = 0;
      ck_assert_int_eq(sw_spec_grid_expand(s, &pts, &n, &err), 0);
      for (size_t i = 0; i < n; i++, runs++) {
        ck_assert_int_eq(sw_spec_resolve_point(s, &pts[i], &c, &err), 0);
        accept_config(path, pts[i].label, s, &c);
        sw_spec_config_clear(&c);
      }
      sw_spec_points_free(&pts, n);
    }
    sw_spec_destroy(&s);
  }
  closedir(d);
  ck_assert_int_ge(files, 12);
  ck_assert_int_gt(runs, files);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sweep_configs");
  TCase *tc = tcase_create("sweeps");
  tcase_add_test(tc, every_sweep_run_is_a_valid_trainer_config);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

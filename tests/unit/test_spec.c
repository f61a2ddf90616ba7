/* test_spec.c: the sweep spec loader. Every tests/fixtures/specs/bad_*.yaml fails with the
 * FILE:LINE:COLUMN and message its first line announces ("# expect: LINE:COL: text"); every
 * good_*.yaml and every file in sweeps/ loads; defaults, arm overlays, grid expansion, the
 * normalised JSON and worker eligibility behave as docs/spec.md says. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_fs.h"
#include "sw_spec.h"

static struct sw_spec *load_ok(const char *yaml) {
  struct sw_spec *s = NULL;
  struct sw_err err = {0};
  int rc = sw_spec_load_string(yaml, "t.yaml", &s, &err);
  ck_assert_msg(rc == 0, "load failed: %s", err.msg);
  ck_assert_ptr_nonnull(s);
  return s;
}

static void load_bad(const char *yaml, const char *expect) {
  struct sw_spec *s = NULL;
  struct sw_err err = {0};
  int rc = sw_spec_load_string(yaml, "t.yaml", &s, &err);
  ck_assert_int_eq(rc, SW_EINVAL);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(err.msg, expect) != NULL, "error '%s' lacks '%s'", err.msg, expect);
}

/* Calls fn(path) for every DIR/PREFIX*.yaml; returns how many there were. */
static int each_yaml(const char *dir, const char *prefix, void (*fn)(const char *path)) {
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  struct dirent *e;
  int n = 0;
  char path[4096];
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, prefix, strlen(prefix)) || len < 5 ||
        strcmp(e->d_name + len - 5, ".yaml"))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    fn(path);
    n++;
  }
  closedir(d);
  return n;
}

static void check_bad_fixture(const char *path) {
  char *text = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_fs_read_all(path, &text, NULL, &err), 0);
  int line = 0, col = 0, used = 0;
  ck_assert_msg(sscanf(text, "# expect: %d:%d: %n", &line, &col, &used) == 2 && used > 0,
                "%s: first line must be '# expect: LINE:COL: message'", path);
  char expect[512];
  const char *msg = text + used;
  size_t mlen = strcspn(msg, "\n");
  snprintf(expect, sizeof expect, "%.*s", (int)mlen, msg);
  free(text);

  struct sw_spec *s = NULL;
  sw_err_clear(&err);
  int rc = sw_spec_load_file(path, &s, &err);
  ck_assert_msg(rc == SW_EINVAL, "%s: loaded (rc %d) but must fail", path, rc);
  ck_assert_ptr_null(s);
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s:%d:%d: ", path, line, col);
  ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0, "%s: got '%s', want prefix '%s'",
                path, err.msg, prefix);
  ck_assert_msg(strstr(err.msg, expect) != NULL, "%s: got '%s', want '%s'", path, err.msg, expect);

  /* `splatsweep check` prints the same line and fails. */
  char *out = NULL;
  size_t outlen = 0;
  FILE *f = open_memstream(&out, &outlen);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(sw_spec_check_file(path, f), SW_EINVAL);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(out, prefix));
  free(out);
}

static void check_good_file(const char *path) {
  struct sw_spec *s = NULL;
  struct sw_err err = {0};
  int rc = sw_spec_load_file(path, &s, &err);
  ck_assert_msg(rc == 0, "%s: %s", path, err.msg);
  json_t *j = sw_spec_to_json(s);
  ck_assert_msg(j != NULL, "%s: no JSON", path);
  /* The normalised JSON is stable: dumping it twice gives the same text. */
  char *a = json_dumps(j, JSON_COMPACT), *b = json_dumps(j, JSON_COMPACT);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  json_decref(j);
  if (s->kind == SW_SPEC_GATE) {
    struct sw_spec_config off, on;
    ck_assert_int_eq(sw_spec_resolve_arm(s, "off", &off, &err), 0);
    ck_assert_int_eq(sw_spec_resolve_arm(s, "on", &on, &err), 0);
    sw_spec_config_clear(&off);
    sw_spec_config_clear(&on);
  } else {
    struct sw_spec_point *pts = NULL;
    size_t n = 0;
    ck_assert_int_eq(sw_spec_grid_expand(s, &pts, &n, &err), 0);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
      struct sw_spec_config c;
      ck_assert_int_eq(sw_spec_resolve_point(s, &pts[i], &c, &err), 0);
      sw_spec_config_clear(&c);
    }
    sw_spec_points_free(&pts, n);
  }
  char *out = NULL;
  size_t outlen = 0;
  FILE *f = open_memstream(&out, &outlen);
  ck_assert_int_eq(sw_spec_check_file(path, f), 0);
  fclose(f);
  ck_assert_msg(strncmp(out, "ok: ", 4) == 0, "%s: check printed '%s'", path, out);
  free(out);
  sw_spec_destroy(&s);
  ck_assert_ptr_null(s);
}

START_TEST(bad_fixtures_fail_with_position) {
  int n = each_yaml(SW_FIXTURES_DIR, "bad_", check_bad_fixture);
  ck_assert_int_ge(n, 15);
}
END_TEST

START_TEST(good_fixtures_load) {
  int n = each_yaml(SW_FIXTURES_DIR, "good_", check_good_file);
  ck_assert_int_ge(n, 3);
}
END_TEST

START_TEST(every_sweep_loads) {
  int n = each_yaml(SW_SOURCE_DIR "/sweeps", "", check_good_file);
  ck_assert_int_ge(n, 12);
}
END_TEST

START_TEST(full_gate_values) {
  struct sw_spec *s = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_spec_load_file(SW_FIXTURES_DIR "/good_gate.yaml", &s, &err), 0);
  ck_assert_str_eq(s->name, "radix-ballot-full");
  ck_assert_int_eq(s->kind, SW_SPEC_GATE);
  ck_assert_int_eq(s->priority, 3);
  ck_assert_int_eq(s->trainer.kind, SW_TRAINER_BUILTIN);
  ck_assert_str_eq(s->trainer.device, "lavapipe");
  ck_assert_uint_eq(s->trainer.options.n, 1);
  ck_assert_str_eq(s->trainer.options.items[0].key, "timing");
  ck_assert_int_eq(s->scene.kind, SW_SCENE_GENERATE);
  ck_assert_str_eq(s->scene.gen_kind, "bricks");
  ck_assert_uint_eq(s->scene.train_views, 12);
  ck_assert_uint_eq(s->scene.resolution, 64);
  ck_assert_uint_eq(s->scene.seed, 7);
  ck_assert_uint_eq(s->pairs.n, 3);
  ck_assert_uint_eq(s->pairs.max, 6);
  ck_assert_int_eq(s->pairs.order, SW_ORDER_RANDOM);
  ck_assert(s->pairs.sequential);
  ck_assert(!s->placement.spread);
  ck_assert_uint_eq(s->placement.n_match, 3);
  ck_assert_str_eq(s->placement.pin, "w1");
  ck_assert(s->gate.k == 2.5 && s->gate.floor == 0.02 && s->gate.alpha == 0.1);
  ck_assert(s->gate.guard.has_band);
  ck_assert(s->gate.guard.band_lo == 36.102 && s->gate.guard.band_hi == 36.302);
  ck_assert(s->gate.guard.max_drop == 0.1);
  ck_assert(s->contamination.sample_interval_s == 0.5);
  ck_assert(s->contamination.cpu_other_mean_max == 0.1 && s->contamination.over_max_s == 3.5);
  ck_assert(!s->contamination.gpu_foreign && s->contamination.shared_host);
  ck_assert(!s->contamination.require_windows && !s->contamination.rerun_once);

  /* Arm overlay: the builtin options first (base overrides timing in place), then base in
   * order; arm values replace in place, new keys append. */
  struct sw_spec_config on;
  ck_assert_int_eq(sw_spec_resolve_arm(s, "on", &on, &err), 0);
  const char *keys[] = {"device",     "timing",           "iterations",    "seed",
                        "background", "resolution_scale", "radix_scatter", "label"};
  ck_assert_uint_eq(on.n, 8);
  for (size_t i = 0; i < 8; i++) ck_assert_str_eq(on.items[i].key, keys[i]);
  ck_assert_str_eq(on.items[0].text, "lavapipe");
  ck_assert_str_eq(on.items[2].text, "400");
  ck_assert(json_integer_value(on.items[2].value) == 400);
  ck_assert_str_eq(on.items[5].text, "1.0");
  ck_assert(json_is_real(on.items[5].value));
  ck_assert_str_eq(on.items[6].text, "ballot");
  /* A quoted number stays a string. */
  ck_assert(json_is_string(on.items[7].value));
  ck_assert_str_eq(on.items[7].text, "0042");
  json_t *j = sw_spec_config_to_json(&on);
  char *txt = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  ck_assert_str_eq(txt, "{\"device\":\"lavapipe\",\"timing\":\"per_kernel\",\"iterations\":400,"
                        "\"seed\":42,\"background\":\"white\",\"resolution_scale\":1.0,"
                        "\"radix_scatter\":\"ballot\",\"label\":\"0042\"}");
  free(txt);
  json_decref(j);
  sw_spec_config_clear(&on);
  ck_assert_int_eq(sw_spec_resolve_arm(s, "sideways", &on, &err), SW_EINVAL);

  struct sw_msg_contamination c;
  sw_spec_contamination_to_msg(s, &c);
  ck_assert(c.load1_max == 2 && c.cpu_other_max == 0.25 && c.settle_s == 5 && c.max_wait_s == 60);
  ck_assert(c.cpu_other_mean_max == 0.1 && c.over_max_s == 3.5 && c.sample_interval_s == 0.5);
  ck_assert(!c.gpu_foreign && c.shared_host && !c.require_windows && !c.rerun_once);
  sw_spec_destroy(&s);
}
END_TEST

START_TEST(defaults_filled) {
  struct sw_spec *s = load_ok("name: d\nkind: gate\ntrainer: {builtin: }\n"
                              "scene: {generate: {}}\narms: {off: {x: 1}, on: {x: 2}}\n");
  ck_assert_uint_eq(s->pairs.n, 5);
  ck_assert_uint_eq(s->pairs.max, 8);
  ck_assert_int_eq(s->pairs.order, SW_ORDER_ALTERNATE);
  ck_assert(!s->pairs.sequential);
  ck_assert(s->placement.spread);
  ck_assert_str_eq(s->gate.metric, "train_s");
  ck_assert_int_eq(s->gate.direction, SW_DIR_LOWER);
  ck_assert(s->gate.k == 2.0 && s->gate.floor == 0.01);
  ck_assert_str_eq(s->gate.guard.metric, "psnr_db");
  ck_assert(s->gate.guard.max_drop == 0.05);
  ck_assert(!s->gate.guard.has_band);
  /* Contamination: sustained evidence (docs/gate-rules.md), load1 not checked. */
  const struct sw_spec_contamination *c = &s->contamination;
  ck_assert(c->load1_max == 0 && c->cpu_other_max == 0.5 && c->cpu_other_mean_max == 0.2);
  ck_assert(c->over_max_s == 2 && c->settle_s == 5 && c->max_wait_s == 300);
  ck_assert(c->sample_interval_s == 1 && c->gpu_foreign && !c->shared_host);
  ck_assert(c->require_windows && c->rerun_once);
  ck_assert_str_eq(s->scene.gen_kind, "bricks");
  ck_assert_uint_eq(s->scene.resolution, 128);

  json_t *j = sw_spec_to_json(s);
  ck_assert(json_integer_value(json_object_get(json_object_get(j, "pairs"), "n")) == 5);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "pairs"), "order")),
                   "alternate");
  ck_assert(json_real_value(json_object_get(json_object_get(json_object_get(j, "gate"), "rule"),
                                            "floor")) == 0.01);
  ck_assert(json_is_object(json_object_get(json_object_get(j, "trainer"), "builtin")));
  ck_assert_str_eq(json_string_value(json_object_get(
                       json_object_get(json_object_get(j, "scene"), "generate"), "kind")),
                   "bricks");
  json_decref(j);
  sw_spec_destroy(&s);

  s = load_ok("name: d\nkind: grid\ntrainer: {builtin: {}}\nscene: {path: /x}\ndescription: ~\n");
  ck_assert_str_eq(s->description, "");
  sw_spec_destroy(&s);
  load_bad("name: ~\nkind: grid\n", "t.yaml:1:7: name: expected a string, got null");

  /* n above the default max lifts max. */
  s = load_ok("name: d\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
              "pairs: {n: 12}\narms: {off: {x: 1}, on: {x: 2}}\n");
  ck_assert_uint_eq(s->pairs.max, 12);
  sw_spec_destroy(&s);
  /* max before n in the mapping is judged against the given n, not the default. */
  s = load_ok("name: d\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
              "pairs: {max: 3, n: 2}\narms: {off: {x: 1}, on: {x: 2}}\n");
  ck_assert_uint_eq(s->pairs.n, 2);
  ck_assert_uint_eq(s->pairs.max, 3);
  sw_spec_destroy(&s);
  load_bad("name: d\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
           "pairs: {max: 3, n: 4}\n",
           "t.yaml:5:14: pairs.max: 3 is less than pairs.n 4");
}
END_TEST

/* The contamination keys: each parses, an absent one gets its default from the one table
 * (sw_spec_contamination_defaults), the normalised JSON carries every value and reads back
 * through sw_spec_contamination_from_json (what the scheduler and the coordinator use), and a
 * bad value is an error at its line:column. */
START_TEST(contamination_keys) {
  static const char *const head = "name: c\nkind: gate\ntrainer: {builtin: {}}\n"
                                  "scene: {path: /x}\narms: {off: {x: 1}, on: {x: 2}}\n";
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "%scontamination:\n  cpu_other_mean_max: 0.3\n  over_max_s: 4\n  gpu_foreign: false\n"
           "  shared_host: true\n  load1_max: 6\n",
           head);
  struct sw_spec *s = load_ok(yaml);
  const struct sw_spec_contamination *c = &s->contamination;
  const struct sw_spec_contamination d = sw_spec_contamination_defaults();
  ck_assert(c->cpu_other_mean_max == 0.3 && c->over_max_s == 4 && c->load1_max == 6);
  ck_assert(!c->gpu_foreign && c->shared_host);
  /* Keys not given keep the defaults. */
  ck_assert(c->cpu_other_max == d.cpu_other_max && c->settle_s == d.settle_s);
  ck_assert(c->max_wait_s == d.max_wait_s && c->sample_interval_s == d.sample_interval_s);
  ck_assert(c->require_windows == d.require_windows && c->rerun_once == d.rerun_once);

  /* The stored JSON holds every value; reading it back gives the same settings. */
  json_t *j = sw_spec_to_json(s);
  const json_t *cj = json_object_get(j, "contamination");
  ck_assert_uint_eq(json_object_size(cj), 11);
  ck_assert(json_is_false(json_object_get(cj, "gpu_foreign")));
  ck_assert(json_real_value(json_object_get(cj, "over_max_s")) == 4);
  struct sw_spec_contamination back;
  sw_spec_contamination_from_json(cj, &back);
  ck_assert(back.load1_max == c->load1_max && back.cpu_other_max == c->cpu_other_max);
  ck_assert(back.cpu_other_mean_max == c->cpu_other_mean_max && back.over_max_s == c->over_max_s);
  ck_assert(back.settle_s == c->settle_s && back.max_wait_s == c->max_wait_s);
  ck_assert(back.sample_interval_s == c->sample_interval_s);
  ck_assert(back.gpu_foreign == c->gpu_foreign && back.shared_host == c->shared_host);
  ck_assert(back.require_windows == c->require_windows && back.rerun_once == c->rerun_once);
  struct sw_msg_contamination m;
  sw_spec_contamination_to_msg(s, &m);
  ck_assert(m.cpu_other_mean_max == 0.3 && m.over_max_s == 4 && !m.gpu_foreign && m.shared_host);
  json_decref(j);
  sw_spec_destroy(&s);

  /* A spec stored before a key existed, or none at all: the defaults. */
  json_t *old = json_pack("{s:f, s:b}", "cpu_other_max", 0.7, "rerun_once", 0);
  sw_spec_contamination_from_json(old, &back);
  ck_assert(back.cpu_other_max == 0.7 && !back.rerun_once);
  ck_assert(back.cpu_other_mean_max == d.cpu_other_mean_max && back.over_max_s == d.over_max_s);
  ck_assert(back.gpu_foreign == d.gpu_foreign && back.load1_max == d.load1_max);
  json_decref(old);
  sw_spec_contamination_from_json(NULL, &back);
  ck_assert(back.settle_s == d.settle_s && back.require_windows == d.require_windows);

  /* Bad values, each at its line:column. */
  snprintf(yaml, sizeof yaml, "%scontamination: {cpu_other_mean_max: -0.1}\n", head);
  load_bad(yaml, "t.yaml:6:37: contamination.cpu_other_mean_max: -0.1 out of range");
  snprintf(yaml, sizeof yaml, "%scontamination: {over_max_s: two}\n", head);
  load_bad(yaml, "t.yaml:6:29: contamination.over_max_s: expected a number");
  snprintf(yaml, sizeof yaml, "%scontamination:\n  shared_host: 1\n", head);
  load_bad(yaml, "t.yaml:7:16: contamination.shared_host: expected true or false");
  snprintf(yaml, sizeof yaml, "%scontamination: {sample_interval_s: 0.001}\n", head);
  load_bad(yaml, "t.yaml:6:36: contamination.sample_interval_s: 0.001 out of range");
  snprintf(yaml, sizeof yaml, "%scontamination: {cpu_other_mean: 0.2}\n", head);
  load_bad(yaml, "t.yaml:6:17: unknown key 'cpu_other_mean' in contamination (allowed: "
                 "load1_max, cpu_other_max, cpu_other_mean_max, over_max_s");
}
END_TEST

START_TEST(notify_and_artifacts_keys) {
  static const char *const head = "name: c\nkind: gate\ntrainer: {builtin: {}}\n"
                                  "scene: {path: /x}\narms: {off: {x: 1}, on: {x: 2}}\n";
  char yaml[1024];
  /* Absent: no webhook, the artifact defaults, written to the stored JSON. */
  struct sw_spec *s = load_ok(head);
  ck_assert_ptr_null(s->notify.webhook);
  const struct sw_spec_artifacts d = sw_spec_artifacts_defaults();
  ck_assert(s->artifacts.upload == d.upload && s->artifacts.final_ply == d.final_ply);
  ck_assert(s->artifacts.keep_sweeps == d.keep_sweeps && s->artifacts.max_file_mb == d.max_file_mb);
  json_t *j = sw_spec_to_json(s);
  ck_assert_ptr_null(json_object_get(j, "notify"));
  ck_assert_uint_eq(json_object_size(json_object_get(j, "artifacts")), 5);
  json_decref(j);
  sw_spec_destroy(&s);

  snprintf(yaml, sizeof yaml,
           "%snotify: {webhook: \"https://chat.lab/h?x=1\"}\n"
           "artifacts: {final_ply: false, keep_sweeps: 3, keep_days: 1.5, max_file_mb: 8}\n",
           head);
  s = load_ok(yaml);
  ck_assert_str_eq(s->notify.webhook, "https://chat.lab/h?x=1");
  ck_assert(!s->artifacts.final_ply && s->artifacts.upload && s->artifacts.keep_sweeps == 3);
  ck_assert(s->artifacts.keep_days == 1.5 && s->artifacts.max_file_mb == 8);
  j = sw_spec_to_json(s);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "notify"), "webhook")),
                   "https://chat.lab/h?x=1");
  struct sw_spec_artifacts back;
  sw_spec_artifacts_from_json(json_object_get(j, "artifacts"), &back);
  ck_assert(!back.final_ply && back.keep_sweeps == 3 && back.keep_days == 1.5 &&
            back.max_file_mb == 8 && back.upload);
  sw_spec_artifacts_from_json(NULL, &back);
  ck_assert(back.final_ply == d.final_ply && back.keep_sweeps == d.keep_sweeps);
  json_decref(j);
  sw_spec_destroy(&s);

  snprintf(yaml, sizeof yaml, "%snotify: {webhook: \"ftp://x/y\"}\n", head);
  load_bad(yaml, "t.yaml:6:19: notify.webhook: 'ftp://x/y' is not an http:// or https:// URL");
  snprintf(yaml, sizeof yaml, "%snotify: {webhook: \"http://a b\"}\n", head);
  load_bad(yaml, "t.yaml:6:19: notify.webhook: the URL holds a space or control character");
  snprintf(yaml, sizeof yaml, "%snotify: {hook: \"http://x\"}\n", head);
  load_bad(yaml, "t.yaml:6:10: unknown key 'hook' in notify (allowed: webhook)");
  snprintf(yaml, sizeof yaml, "%sartifacts: {max_file_mb: 0}\n", head);
  load_bad(yaml, "t.yaml:6:26: artifacts.max_file_mb: 0 out of range");
  snprintf(yaml, sizeof yaml, "%sartifacts: {keep_days: -1}\n", head);
  load_bad(yaml, "t.yaml:6:24: artifacts.keep_days: -1 out of range");
  snprintf(yaml, sizeof yaml, "%sartifacts: {ply: true}\n", head);
  load_bad(yaml, "t.yaml:6:13: unknown key 'ply' in artifacts (allowed: upload, final_ply");
}
END_TEST

START_TEST(grid_expansion_order) {
  struct sw_err err = {0};
  struct sw_spec *s =
      load_ok("name: g\nkind: grid\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
              "base: {iterations: 100, binning: resident}\n"
              "parameters: {binning: [resident, transient], radix_passes: [skip, full, full2]}\n"
              "repeats: 2\ncheckpoints: [50, 100]\n");
  struct sw_spec_point *pts = NULL;
  size_t n = 0;
  ck_assert_int_eq(sw_spec_grid_expand(s, &pts, &n, &err), 0);
  ck_assert_uint_eq(n, 12);
  /* Repeats outermost, last parameter fastest. */
  ck_assert_str_eq(pts[0].label, "binning=resident,radix_passes=skip");
  ck_assert_str_eq(pts[1].label, "binning=resident,radix_passes=full");
  ck_assert_str_eq(pts[2].label, "binning=resident,radix_passes=full2");
  ck_assert_str_eq(pts[3].label, "binning=transient,radix_passes=skip");
  ck_assert_str_eq(pts[6].label, "binning=resident,radix_passes=skip");
  ck_assert_str_eq(pts[11].label, "binning=transient,radix_passes=full2");
  for (size_t i = 0; i < n; i++) {
    ck_assert_uint_eq(pts[i].index, i);
    ck_assert_uint_eq(pts[i].repeat, i / 6);
  }
  struct sw_spec_config c;
  ck_assert_int_eq(sw_spec_resolve_point(s, &pts[9], &c, &err), 0);
  ck_assert_uint_eq(c.n, 4);
  ck_assert_str_eq(c.items[0].key, "iterations");
  ck_assert_str_eq(c.items[1].key, "binning");
  ck_assert_str_eq(c.items[1].text, "transient");
  ck_assert_str_eq(c.items[2].key, "radix_passes");
  ck_assert_str_eq(c.items[2].text, "skip");
  ck_assert_str_eq(c.items[3].key, "checkpoints");
  ck_assert_str_eq(c.items[3].text, "50,100");
  ck_assert_uint_eq(json_array_size(c.items[3].value), 2);
  sw_spec_config_clear(&c);
  sw_spec_points_free(&pts, n);
  ck_assert_int_eq(sw_spec_resolve_arm(s, "on", &c, &err), SW_EINVAL);
  sw_spec_destroy(&s);

  /* Checkpoints beyond a run's iterations are dropped. */
  s = load_ok("name: p\nkind: grid\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
              "parameters: {iterations: [6000, 12500, 500]}\ncheckpoints: [1000, 6000, 12500]\n");
  ck_assert_int_eq(sw_spec_grid_expand(s, &pts, &n, &err), 0);
  ck_assert_uint_eq(n, 3);
  const char *want[] = {"1000,6000", "1000,6000,12500", NULL};
  for (size_t i = 0; i < 3; i++) {
    ck_assert_int_eq(sw_spec_resolve_point(s, &pts[i], &c, &err), 0);
    const struct sw_spec_kv *cp = sw_spec_config_get(&c, "checkpoints");
    if (want[i])
      ck_assert_str_eq(cp->text, want[i]);
    else
      ck_assert_ptr_null(cp);
    sw_spec_config_clear(&c);
  }
  sw_spec_points_free(&pts, n);
  sw_spec_destroy(&s);

  /* No parameters: `repeats` runs of the base config. */
  s = load_ok("name: a\nkind: grid\ntrainer: {builtin: {}}\nscene: {path: /x}\nrepeats: 3\n");
  ck_assert_int_eq(sw_spec_grid_expand(s, &pts, &n, &err), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert_str_eq(pts[2].label, "base");
  ck_assert_uint_eq(pts[2].repeat, 2);
  sw_spec_points_free(&pts, n);
  sw_spec_destroy(&s);
}
END_TEST

START_TEST(exec_trainer) {
  struct sw_spec *s = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_spec_load_file(SW_FIXTURES_DIR "/good_exec.yaml", &s, &err), 0);
  ck_assert_int_eq(s->trainer.kind, SW_TRAINER_EXEC);
  ck_assert_uint_eq(s->trainer.n_command, 4);
  ck_assert_str_eq(s->trainer.command[3], "{set}");
  ck_assert_str_eq(s->trainer.result, "{out}/metrics.json");
  ck_assert(s->trainer.timeout_s == 600);
  ck_assert_uint_eq(s->trainer.n_map, 2);
  ck_assert_str_eq(s->trainer.map[1].metric, "psnr_db");
  ck_assert_str_eq(s->trainer.map[1].pointer, "/eval/psnr");
  ck_assert_int_eq(s->scene.kind, SW_SCENE_NONE);
  json_t *t = sw_spec_trainer_to_json(s);
  json_t *ex = json_object_get(t, "exec");
  ck_assert_uint_eq(json_array_size(json_object_get(ex, "command")), 4);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(ex, "map"), "train_s")),
                   "/timing/total");
  json_decref(t);
  json_t *sc = sw_spec_scene_to_json(s);
  ck_assert_uint_eq(json_object_size(sc), 0);
  json_decref(sc);
  struct sw_spec_config on;
  ck_assert_int_eq(sw_spec_resolve_arm(s, "on", &on, &err), 0);
  ck_assert_str_eq(on.items[1].text, "true");
  ck_assert(json_is_true(on.items[1].value));
  sw_spec_config_clear(&on);
  sw_spec_destroy(&s);
}
END_TEST

START_TEST(string_errors) {
  load_bad("", "t.yaml:1:1: empty spec");
  load_bad("- a\n- b\n", "t.yaml:1:1: spec: expected a mapping");
  load_bad("name: x\n", "missing required key 'kind'");
  load_bad("name: x\nkind: sweep\n", "t.yaml:2:7: kind: 'sweep' is not one of gate | grid");
  load_bad("name: 'a b'\nkind: gate\n", "t.yaml:1:7: name:");
  load_bad("name: x\nkind: gate\narms: {off: {}, on: {}}\n", "missing required key 'trainer'");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\narms: {off: {a: 1}, on: {a: 2}}\n",
           "'scene'");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
           "arms: {off: {}, on: {}}\n",
           "t.yaml:5:1: arms: off and on resolve to the same");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x, url: http://a}\n",
           "t.yaml:4:19: scene: give exactly one");
  load_bad("name: x\nkind: gate\ntrainer: {exec: {result: r}}\n",
           "t.yaml:3:11: missing required key 'command' in trainer.exec");
  load_bad("name: x\nkind: gate\ntrainer: {exec: {command: [a], map: {t: timing}}}\n",
           "not a JSON pointer");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
           "placement: {match: {color: red}}\n",
           "t.yaml:5:21: placement.match: unknown field 'color'");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
           "gate: {guard: {band: [36.3, 36.1]}}\n",
           "low 36.3 must be below high 36.1");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
           "contamination: {settle_s: 20, max_wait_s: 10}\n",
           "max_wait_s 10 is less than settle_s 20");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
           "pairs: {sequential: yes}\n",
           "t.yaml:5:21: pairs.sequential: expected true or false");
  load_bad("name: x\nkind: grid\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
           "parameters: {a: [1,2,3,4,5,6,7,8,9,10], b: [1,2,3,4,5,6,7,8,9,10],"
           " c: [1,2,3,4,5,6,7,8,9,10], d: [1,2,3,4,5,6,7,8,9,10], e: [1, 2]}\n",
           "more than 10000 runs");
  load_bad("name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {generate: {resolution: 4}}\n",
           "t.yaml:4:32: scene.generate.resolution: 4 out of range");
  struct sw_spec *s = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_spec_load_file("/nonexistent/spec.yaml", &s, &err), SW_ENOTFOUND);
  ck_assert_int_eq(sw_spec_load_string(NULL, "n", &s, &err), SW_EINVAL);
  sw_spec_destroy(NULL);
  sw_spec_destroy(&s);
}
END_TEST

/* Placement is one function (sw_spec_placement_eligible), the one the scheduler calls with the
 * fingerprint and labels the coordinator made of a Hello. */
START_TEST(worker_eligibility) {
  struct sw_spec *s =
      load_ok("name: e\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
              "arms: {off: {a: 1}, on: {a: 2}}\n"
              "placement: {match: {os: 'Darwin*', label.site: 'lab-?', cores: '1?'}}\n");
  json_t *fp = json_pack("{s:s, s:i, s:s}", "os", "Darwin 24.1", "cores", 16, "worker_id", "w1");
  json_t *labels = json_object();
  const struct sw_spec_placement *pl = &s->placement;
  ck_assert_int_eq(sw_spec_placement_eligible(pl, "w1", fp, labels), 0); /* no site label */
  ck_assert_int_eq(sw_spec_placement_eligible(pl, "w1", fp, NULL), 0);
  json_object_set_new(labels, "site", json_string("lab-a"));
  ck_assert_int_eq(sw_spec_placement_eligible(pl, "w1", fp, labels), 1);
  json_object_set_new(fp, "cores", json_integer(8));
  ck_assert_int_eq(sw_spec_placement_eligible(pl, "w1", fp, labels), 0);
  json_object_set_new(fp, "cores", json_integer(12));
  json_object_set_new(fp, "os", json_string("Linux 6.1"));
  ck_assert_int_eq(sw_spec_placement_eligible(pl, "w1", fp, labels), 0);
  sw_spec_destroy(&s);

  s = load_ok("name: e\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
              "arms: {off: {a: 1}, on: {a: 2}}\nplacement: {pin: 'w[23]'}\n");
  ck_assert_int_eq(sw_spec_placement_eligible(&s->placement, "w1", fp, labels), 0);
  ck_assert_int_eq(sw_spec_placement_eligible(&s->placement, "w2", fp, labels), 1);
  sw_spec_destroy(&s);

  /* worker_id and trainer_sha256 are matchers too; a boolean field matches as its word. */
  s = load_ok("name: e\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
              "arms: {off: {a: 1}, on: {a: 2}}\n"
              "placement: {match: {worker_id: 'gpu-*', trainer_sha256: 'ab*'}}\n");
  json_object_set_new(fp, "trainer_sha256", json_string("abcdef"));
  ck_assert_int_eq(sw_spec_placement_eligible(&s->placement, "gpu-1", fp, labels), 1);
  ck_assert_int_eq(sw_spec_placement_eligible(&s->placement, "cpu-1", fp, labels), 0);
  json_object_set_new(fp, "trainer_sha256", json_string("ffff"));
  ck_assert_int_eq(sw_spec_placement_eligible(&s->placement, "gpu-1", fp, labels), 0);
  sw_spec_destroy(&s);
  json_decref(fp);
  json_decref(labels);
}
END_TEST

/* A valid gate spec, the base of the limit tests below. */
#define GATE_HEAD "name: x\nkind: gate\ntrainer: {builtin: {}}\nscene: {path: /x}\n"
#define GATE_ARMS "arms: {off: {a: 1}, on: {a: 2}}\n"

/* A gate spec ending in `tail` loads, and its description is want. */
static void description_is(const char *tail, const char *want) {
  char yaml[512];
  int n = snprintf(yaml, sizeof yaml, GATE_HEAD GATE_ARMS "%s", tail);
  ck_assert_int_lt(n, (int)sizeof yaml);
  struct sw_spec *s = load_ok(yaml);
  ck_assert_str_eq(s->description, want);
  sw_spec_destroy(&s);
}

/* Text of `depth` nested flow sequences around one scalar: [[[1]]] for 3. */
static char *nested(int depth) {
  char *t = malloc(2 * (size_t)depth + 2);
  ck_assert_ptr_nonnull(t);
  char *p = t;
  for (int i = 0; i < depth; i++) *p++ = '[';
  *p++ = '1';
  for (int i = 0; i < depth; i++) *p++ = ']';
  *p = 0;
  return t;
}

START_TEST(alias_bomb_refused) {
  /* "Billion laughs": nine levels of ten aliases each expand to 10^9 nodes. The loader refuses it
   * at the alias whose expansion passes the node limit, without expanding it. */
  char yaml[4096];
  int off = snprintf(yaml, sizeof yaml,
                     GATE_HEAD GATE_ARMS "base: {a: 1}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
  for (int level = 1; level <= 9; level++) {
    off += snprintf(yaml + off, sizeof yaml - off, "l%d: &l%d [", level, level);
    for (int i = 0; i < 10; i++)
      off += snprintf(yaml + off, sizeof yaml - off, "%s*l%d", i ? ", " : "", level - 1);
    off += snprintf(yaml + off, sizeof yaml - off, "]\n");
  }
  ck_assert_int_lt(off, (int)sizeof yaml);
  /* l0 holds 11 nodes, l1 111, l3 11,111: with the 12,4xx nodes before it, the eighth alias of
   * l4 (line 11) is where the expansion passes 100,000 nodes. */
  load_bad(yaml, "t.yaml:11:45: alias '*l3' expands the document: more than 100000 YAML nodes "
                 "(the limit)");

  /* The same bomb sent as the value of a real key is refused the same way. */
  load_bad(GATE_HEAD "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
                     "a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n"
                     "a2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\n"
                     "a3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]\n"
                     "arms: {off: {a: 1}, on: {a: 2}}\n"
                     "description: [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]\n",
           "t.yaml:10:50: alias '*a3' expands the document: more than 100000 YAML nodes");

  /* Anchors and aliases within the limits still work: an arm shares the base's mapping. */
  struct sw_spec *s = load_ok(GATE_HEAD "base: &b {iterations: 100, seed: 1}\n"
                                        "arms: {off: *b, on: {iterations: 200}}\n");
  const struct sw_spec_kv *it = sw_spec_config_get(&s->arm_off, "iterations");
  ck_assert_ptr_nonnull(it);
  ck_assert_str_eq(it->text, "100");
  ck_assert_uint_eq(s->arm_off.n, 2);
  sw_spec_destroy(&s);

  /* Anchors are bounded (an alias finds its anchor by a linear search): the 65th is refused at
   * its '&'. */
  char many[2048];
  int o = snprintf(many, sizeof many, GATE_HEAD GATE_ARMS "description: [");
  for (int i = 0; i < 65; i++) o += snprintf(many + o, sizeof many - o, "&n%d x, ", i);
  snprintf(many + o, sizeof many - o, "x]\n");
  load_bad(many, "t.yaml:6:517: YAML: more than 64 anchors (the limit)");

  /* An alias that names no anchor before it is a positioned error at its '*', not an empty spec;
   * so is one naming the collection it sits in (no node holds itself). */
  load_bad(GATE_HEAD GATE_ARMS "description: *nowhere\n",
           "t.yaml:6:14: YAML: alias '*nowhere' names no anchor before it");
  load_bad(GATE_HEAD GATE_ARMS "x: &self [1, *self]\n",
           "t.yaml:6:14: YAML: alias '*self' names no anchor before it");
  /* A key twice in one mapping is refused at the second, also inside a flow mapping. */
  load_bad(GATE_HEAD GATE_ARMS "description: a\ndescription: b\n",
           "t.yaml:7:1: YAML: duplicate key 'description' (first at line 6)");
  load_bad(GATE_HEAD "arms: {off: {a: 1}, on: {a: 2, a: 3}}\n",
           "t.yaml:5:32: YAML: duplicate key 'a' (first at line 5)");
  /* Merge keys: the base's pairs the arm lacks, its own winning; several bases, the first
   * winning; a merge key's value must be a mapping or a list of mappings. */
  s = load_ok(GATE_HEAD "base: &b {iterations: 100, seed: 1}\n"
                        "arms: {off: {<<: *b, seed: 2}, on: {<<: [{seed: 3}, *b]}}\n");
  it = sw_spec_config_get(&s->arm_off, "seed");
  ck_assert_ptr_nonnull(it);
  ck_assert_str_eq(it->text, "2");
  it = sw_spec_config_get(&s->arm_off, "iterations");
  ck_assert_ptr_nonnull(it);
  ck_assert_str_eq(it->text, "100");
  it = sw_spec_config_get(&s->arm_on, "seed");
  ck_assert_ptr_nonnull(it);
  ck_assert_str_eq(it->text, "3");
  sw_spec_destroy(&s);
  load_bad(GATE_HEAD "arms: {off: {<<: 5}, on: {a: 2}}\n",
           "t.yaml:5:14: YAML: a merge key '<<' takes a mapping or a sequence of mappings");
  /* Escaped quotes in single-quoted scalars read as YAML says, however many in a row (libfyaml
   * 0.7.12, the parser before libyaml, read 'a''''b' as a''' and leaked on five or more:
   * tests/fuzz/corpus/spec/quote_run.yaml). */
  description_is("description: 'a''''b'\n", "a''b");
  description_is("description: ''''''''''''''''''''''''\n", "'''''''''''");
  description_is("description: \"a''b\"\n", "a''b");
  description_is("description: 'a''b''c'''\n", "a'b'c'");
  /* CR LF and lone CR line breaks read as LF ones (tests/fuzz/corpus/spec/crlf_breaks.yaml):
   * the same description, positions counted the same. */
  description_is("description: \"\r\n\r\n\r\n\r\n\r\n\r\n a\"\r\n", "\n\n\n\n\na");
  description_is("description: \"\n\n\n\n\n\n a\"\n", "\n\n\n\n\na");
  description_is("description: \"x\r\r y\"\r", "x\ny");
  load_bad(GATE_HEAD GATE_ARMS "\r\n\r\nbogus: 1\r\n", "t.yaml:8:1:");
}
END_TEST

START_TEST(node_count_limited) {
  /* 100,001 scalars in one list, no alias: more nodes than the limit however they are written. */
  size_t cap = 300000;
  char *yaml = malloc(cap);
  ck_assert_ptr_nonnull(yaml);
  size_t off = (size_t)snprintf(yaml, cap, GATE_HEAD GATE_ARMS "description: [");
  for (int i = 0; i < 100001; i++)
    off += (size_t)snprintf(yaml + off, cap - off, "%s1", i ? "," : "");
  off += (size_t)snprintf(yaml + off, cap - off, "]\n");
  ck_assert_uint_lt(off, cap);
  /* The spec's own nodes come first (25 up to the list), so the limit falls inside the list. */
  load_bad(yaml, "more than 100000 YAML nodes (the limit)");
  struct sw_err err = {0};
  struct sw_spec *s = NULL;
  ck_assert_int_eq(sw_spec_load_string(yaml, "t.yaml", &s, &err), SW_EINVAL);
  ck_assert_msg(strncmp(err.msg, "t.yaml:6:", 9) == 0, "error '%s' is not on line 6", err.msg);
  free(yaml);
}
END_TEST

START_TEST(multi_document_refused) {
  /* A second document is refused at its first line, even when the first one is a valid spec. */
  load_bad(GATE_HEAD GATE_ARMS "---\nname: y\n",
           "t.yaml:6:1: a second YAML document starts here (one document per file)");
  load_bad("---\n" GATE_HEAD GATE_ARMS "...\n---\n", "t.yaml:8:1: a second YAML document");
  /* After an end marker, text without "---" is refused at the same place (libyaml reads YAML 1.1,
   * where a document after "..." needs its "---"). */
  load_bad(GATE_HEAD GATE_ARMS "...\nname: y\n",
           "t.yaml:7:1: YAML: did not find expected <document start>");
  /* An explicit start and end of the one document are fine. */
  struct sw_spec *s = load_ok("---\n" GATE_HEAD GATE_ARMS "...\n# trailing comment\n");
  ck_assert_str_eq(s->name, "x");
  sw_spec_destroy(&s);
}
END_TEST

START_TEST(depth_limited) {
  char yaml[1024];
  /* 64 levels (the root mapping and 63 sequences) are allowed: they fail later for what they
   * are, not for their depth. */
  char *ok = nested(63);
  snprintf(yaml, sizeof yaml, GATE_HEAD GATE_ARMS "description: %s\n", ok);
  load_bad(yaml, "t.yaml:6:1: description: expected a string, got a sequence");
  free(ok);
  char *deep = nested(64);
  snprintf(yaml, sizeof yaml, GATE_HEAD GATE_ARMS "description: %s\n", deep);
  load_bad(yaml, "t.yaml:6:77: YAML: nested deeper than 64 levels (the limit)");
  ck_assert_ptr_nonnull(strstr(yaml, deep));
  free(deep);
  /* Aliases cannot nest deeper than the text may: 40 levels inside 30 (and the root) is 71. */
  char *inner = nested(40), *outer = nested(30);
  char *at = strchr(outer, '1');
  *at = 0;
  snprintf(yaml, sizeof yaml, GATE_HEAD GATE_ARMS "x: &x %s\ndescription: %s*x%s\n", inner, outer,
           at + 1);
  load_bad(yaml, "t.yaml:7:44: alias '*x' expands the document: nested deeper than 64 levels");
  free(inner);
  free(outer);
}
END_TEST

/* A flow mapping {PREFIX0: 1, PREFIX1: 1, ...} of n keys. */
static char *wide_map(const char *prefix, int n) {
  size_t cap = (size_t)n * 16 + 8;
  char *t = malloc(cap);
  ck_assert_ptr_nonnull(t);
  size_t off = (size_t)snprintf(t, cap, "{");
  for (int i = 0; i < n; i++)
    off += (size_t)snprintf(t + off, cap - off, "%s%s%d: 1", i ? ", " : "", prefix, i);
  snprintf(t + off, cap - off, "}");
  return t;
}

START_TEST(mapping_width_limited) {
  /* Duplicate keys are checked every key against every other, so mappings are bounded: 256 keys
   * load (here as a builtin trainer's options), 257 do not, refused at the 257th key. */
  char yaml[16384];
  char *m = wide_map("k", 256);
  snprintf(yaml, sizeof yaml,
           "name: x\nkind: gate\ntrainer: {builtin: %s}\nscene: {path: /x}\n" GATE_ARMS, m);
  struct sw_spec *s = load_ok(yaml);
  ck_assert_uint_eq(s->trainer.options.n, 256);
  sw_spec_destroy(&s);
  free(m);
  m = wide_map("k", 257);
  snprintf(yaml, sizeof yaml, GATE_HEAD GATE_ARMS "base: %s\n", m);
  load_bad(yaml, "t.yaml:6:2202: YAML: a mapping of more than 256 keys (the limit)");
  free(m);
  /* Merge keys widen a mapping after the text is read: 200 + 100 merged keys are refused. */
  char *a = wide_map("a", 200), *b = wide_map("b", 100);
  snprintf(yaml, sizeof yaml, GATE_HEAD GATE_ARMS "x: &a %s\ny: &b %s\nbase: {<<: [*a, *b]}\n", a,
           b);
  load_bad(yaml, "t.yaml:8:8: YAML: a mapping of more than 256 keys after merge keys (the limit)");
  free(a);
  free(b);
}
END_TEST

START_TEST(not_utf8_refused) {
  /* A spec is Unicode text, refused at its first bad byte before it is parsed (libfyaml 0.7.12,
   * the parser before libyaml, never returned from a directive line holding one). */
  load_bad("%\xa5\n", "t.yaml:1:2: not UTF-8 text (byte 0xa5)");
  load_bad(GATE_HEAD GATE_ARMS "description: caf\xc3\xa9 \xc3(\n",
           "t.yaml:6:19: not UTF-8 text (byte 0xc3)");
  load_bad(GATE_HEAD GATE_ARMS "description: \xed\xa0\x80\n", "t.yaml:6:14: not UTF-8 text");
  struct sw_spec *s = load_ok(GATE_HEAD GATE_ARMS "description: caf\xc3\xa9 \xf0\x9f\x8c\x8b\n");
  ck_assert_str_eq(s->description, "caf\xc3\xa9 \xf0\x9f\x8c\x8b");
  sw_spec_destroy(&s);
}
END_TEST

START_TEST(size_limited) {
  /* A valid spec padded with a comment to exactly the limit loads; one byte more does not. */
  const char *head = GATE_HEAD GATE_ARMS "#";
  size_t max = SW_MSG_YAML_MAX;
  char *yaml = malloc(max + 2);
  ck_assert_ptr_nonnull(yaml);
  size_t n = strlen(head);
  memcpy(yaml, head, n);
  memset(yaml + n, 'x', max - n - 1);
  yaml[max - 1] = '\n';
  yaml[max] = 0;
  struct sw_spec *s = load_ok(yaml);
  sw_spec_destroy(&s);
  yaml[max] = '\n';
  yaml[max + 1] = 0;
  load_bad(yaml, "t.yaml:1:1: spec of 1048577 bytes is larger than 1048576 bytes (the limit)");
  free(yaml);
}
END_TEST

/* xorshift64*: seeded, so a failing mutation can be replayed. */
static uint64_t rng_next(uint64_t *x) {
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 2685821657736338717ull;
}

START_TEST(fuzz_mutated_specs) {
  /* Byte mutations of a full spec: every outcome is a loaded spec or a positioned error. */
  char *text = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_fs_read_all(SW_FIXTURES_DIR "/good_gate.yaml", &text, &len, &err), 0);
  char *copy = malloc(len + 1);
  ck_assert_ptr_nonnull(copy);
  const char alphabet[] = "{}[]:,-'\"#&*!|>?%@ \n\tabc019.~";
  uint64_t seed = 0x5eed0003;
  int loaded = 0;
  for (int i = 0; i < 3000; i++) {
    memcpy(copy, text, len + 1);
    size_t cut = len;
    int edits = 1 + (int)(rng_next(&seed) % 3);
    for (int e = 0; e < edits; e++) {
      size_t at = rng_next(&seed) % len;
      copy[at] = alphabet[rng_next(&seed) % (sizeof alphabet - 1)];
    }
    if (i % 5 == 0) cut = rng_next(&seed) % len;
    copy[cut] = 0;
    struct sw_spec *s = NULL;
    sw_err_clear(&err);
    int rc = sw_spec_load_string(copy, "m.yaml", &s, &err);
    if (rc == 0) {
      loaded++;
      json_t *j = sw_spec_to_json(s);
      ck_assert_ptr_nonnull(j);
      json_decref(j);
      sw_spec_destroy(&s);
    } else {
      ck_assert_int_eq(rc, SW_EINVAL);
      ck_assert_ptr_null(s);
      ck_assert_msg(strncmp(err.msg, "m.yaml:", 7) == 0, "unpositioned error '%s'", err.msg);
    }
  }
  ck_assert_int_gt(loaded, 0);
  free(copy);
  free(text);
}
END_TEST

static Suite *spec_suite(void) {
  Suite *s = suite_create("spec");
  TCase *files = tcase_create("files");
  tcase_add_test(files, bad_fixtures_fail_with_position);
  tcase_add_test(files, good_fixtures_load);
  tcase_add_test(files, notify_and_artifacts_keys);
  tcase_add_test(files, every_sweep_loads);
  suite_add_tcase(s, files);
  TCase *api = tcase_create("api");
  tcase_add_test(api, full_gate_values);
  tcase_add_test(api, defaults_filled);
  tcase_add_test(api, contamination_keys);
  tcase_add_test(api, grid_expansion_order);
  tcase_add_test(api, exec_trainer);
  tcase_add_test(api, string_errors);
  tcase_add_test(api, worker_eligibility);
  tcase_add_test(api, fuzz_mutated_specs);
  suite_add_tcase(s, api);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, alias_bomb_refused);
  tcase_add_test(limits, node_count_limited);
  tcase_add_test(limits, multi_document_refused);
  tcase_add_test(limits, depth_limited);
  tcase_add_test(limits, mapping_width_limited);
  tcase_add_test(limits, not_utf8_refused);
  tcase_add_test(limits, size_limited);
  suite_add_tcase(s, limits);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(spec_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

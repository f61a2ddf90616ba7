/* test_artifact.c: Check suite for the coordinator's artifact store (coordinator/sw_artifact.h)
 * on a real store file: the upload key (made once, mode 0600) and the tokens derived from it;
 * the rows a result's artifacts become (over-limit and unwanted files refused, a resend adding
 * nothing); the sweep's listing; and retention by keep_sweeps and keep_days, files included. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sw_artifact.h"
#include "sw_fs.h"
#include "sw_report.h"

static char g_dir[64], g_db[128];
static sw_store_t *g_store;

static void exec_sql(const char *sql) {
  struct sw_err err = {0};
  ck_assert_msg(sw_store_exec(g_store, sql, &err) == 0, "%s", err.msg);
}

/* Sweep id with one pair and one run (id = sweep * 10) with attempt 1; artifacts rule json. */
static void add_sweep(int id, const char *status, const char *artifacts_json) {
  char sql[1200];
  snprintf(sql, sizeof sql,
           "INSERT INTO sweeps (id, name, kind, spec_yaml, spec_json, spec_sha256, status, "
           "created_ms) VALUES (%d, 's%d', 'gate', '', '{\"artifacts\": %s}', '', '%s', 0);"
           "INSERT INTO pairs (id, sweep_id, idx, ord, created_ms) VALUES (%d, %d, 0, 'off-on', 0);"
           "INSERT INTO runs (id, pair_id, arm, position, config_json, config_sha256) VALUES "
           "(%d, %d, 'off', 0, '{}', '');"
           "INSERT INTO attempts (run_id, attempt, status, exit_status) VALUES (%d, 1, 'ok', 0);",
           id, id, artifacts_json, status, id, id, id * 10, id, id * 10);
  exec_sql(sql);
}

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw_test_artifactXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/a.db", g_dir);
  struct sw_err err = {0};
  ck_assert_msg(sw_store_open(g_db, NULL, &g_store, &err) == 0, "%s", err.msg);
}

static void teardown(void) {
  sw_store_close(&g_store);
  sw_fs_rm_rf(g_dir, NULL);
}

static struct sw_msg_artifact art(const char *name, uint64_t size) {
  struct sw_msg_artifact a;
  memset(&a, 0, sizeof a);
  snprintf(a.name, sizeof a.name, "%s", name);
  a.size = size;
  memset(a.sha256, 'a', 64);
  return a;
}

START_TEST(key_and_tokens) {
  uint8_t k1[SW_ARTIFACT_KEY_LEN], k2[SW_ARTIFACT_KEY_LEN];
  struct sw_err err = {0};
  ck_assert_int_eq(sw_artifact_key_load(g_db, k1, &err), 0);
  ck_assert_int_eq(sw_artifact_key_load(g_db, k2, &err), 0);
  ck_assert_mem_eq(k1, k2, sizeof k1); /* made once, then read */
  char path[200];
  snprintf(path, sizeof path, "%s/artifacts/upload.key", g_dir);
  struct stat sb;
  ck_assert_int_eq(stat(path, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 0777, 0600);
  char t1[SW_MSG_TOKEN_LEN + 1], t2[SW_MSG_TOKEN_LEN + 1], t3[SW_MSG_TOKEN_LEN + 1];
  sw_artifact_token(k1, 12, 1, t1);
  sw_artifact_token(k1, 12, 1, t2);
  sw_artifact_token(k1, 12, 2, t3);
  ck_assert_uint_eq(strlen(t1), 64);
  ck_assert_str_eq(t1, t2);
  ck_assert_str_ne(t1, t3); /* another attempt, another token */
  /* A key file of the wrong size is refused, not used. */
  FILE *f = fopen(path, "w");
  fputs("short", f);
  fclose(f);
  ck_assert_int_eq(sw_artifact_key_load(g_db, k2, &err), SW_EIO);
}
END_TEST

START_TEST(expect_and_list) {
  add_sweep(1, "done", "{}");
  struct sw_spec_artifacts rules = sw_spec_artifacts_defaults();
  rules.max_file_mb = 1;
  rules.final_ply = false;
  struct sw_msg_artifact a[3] = {art("result.json", 100), art("final.ply", 50),
                                 art("renders/big.png", 2u << 20)};
  struct sw_err err = {0};
  ck_assert_msg(sw_artifact_expect(g_store, 10, 1, a, 3, &rules, &err) == 0, "%s", err.msg);
  /* A resent result: nothing new. */
  ck_assert_int_eq(sw_artifact_expect(g_store, 10, 1, a, 3, &rules, &err), 0);
  ck_assert_int_eq(sw_artifact_expect(g_store, 10, 7, a, 1, &rules, &err), SW_ENOTFOUND);
  json_t *list = sw_report_artifacts_json(g_store, 1, &err);
  ck_assert_ptr_nonnull(list);
  ck_assert_uint_eq(json_array_size(list), 3);
  size_t i;
  json_t *o;
  json_array_foreach(list, i, o) {
    const char *name = json_string_value(json_object_get(o, "name"));
    const char *state = json_string_value(json_object_get(o, "state"));
    const char *reason = json_string_value(json_object_get(o, "reason"));
    if (!strcmp(name, "result.json")) {
      ck_assert_str_eq(state, "expected");
      ck_assert(json_is_null(json_object_get(o, "url")));
    } else if (!strcmp(name, "final.ply")) {
      ck_assert_str_eq(state, "refused");
      ck_assert_ptr_nonnull(strstr(reason, "final_ply"));
    } else {
      ck_assert_str_eq(state, "refused");
      ck_assert_ptr_nonnull(strstr(reason, "max_file_mb 1"));
    }
  }
  json_decref(list);
  exec_sql("UPDATE artifacts SET state = 'stored' WHERE name = 'result.json'");
  list = sw_report_artifacts_json(g_store, 1, &err);
  json_array_foreach(list, i,
                     o) if (!strcmp(json_string_value(json_object_get(o, "name")), "result.json"))
      ck_assert_str_eq(json_string_value(json_object_get(o, "url")), "/artifact/10/1/result.json");
  json_decref(list);
}
END_TEST

/* A stored file of sweep id's run on disk, with its row. */
static void stored_file(int id, int64_t stored_wall_ms) {
  struct sw_spec_artifacts rules = sw_spec_artifacts_defaults();
  struct sw_msg_artifact a = art("final.ply", 3);
  struct sw_err err = {0};
  ck_assert_int_eq(sw_artifact_expect(g_store, id * 10, 1, &a, 1, &rules, &err), 0);
  char sql[300], path[300];
  snprintf(sql, sizeof sql,
           "UPDATE artifacts SET state = 'stored', stored_wall_ms = %lld WHERE attempt_id = "
           "(SELECT id FROM attempts WHERE run_id = %d)",
           (long long)stored_wall_ms, id * 10);
  exec_sql(sql);
  snprintf(path, sizeof path, "%s/artifacts/%d/%d-a1", g_dir, id, id * 10);
  ck_assert_int_eq(sw_fs_mkdir_p(path, &err), 0);
  snprintf(path, sizeof path, "%s/artifacts/%d/%d-a1/final.ply", g_dir, id, id * 10);
  ck_assert_int_eq(sw_fs_write_atomic(path, "ply", 3, &err), 0);
}

static int exists(int id) {
  char path[300];
  snprintf(path, sizeof path, "%s/artifacts/%d/%d-a1/final.ply", g_dir, id, id * 10);
  return sw_fs_exists(path);
}

START_TEST(retention_rules) {
  const int64_t day = 86400000, now = 1800000000000;
  add_sweep(1, "done", "{\"keep_sweeps\": 2, \"keep_days\": 0}");
  add_sweep(2, "done", "{\"keep_sweeps\": 0, \"keep_days\": 1}");
  add_sweep(3, "done", "{\"keep_sweeps\": 0, \"keep_days\": 0}");
  add_sweep(4, "running", "{\"keep_sweeps\": 1, \"keep_days\": 0}");
  stored_file(1, now);
  stored_file(2, now - 2 * day);
  stored_file(3, now - 1000 * day);
  stored_file(4, now);
  struct sw_err err = {0};
  /* Sweep 1 has two finished sweeps after it (2 and 3; 4 runs): gone. Sweep 2's file is two
   * days old against keep_days 1: gone. Sweep 3 keeps everything, a running sweep too. */
  ck_assert_int_eq(sw_artifact_retain(g_store, g_db, now, &err), 2);
  ck_assert(!exists(1) && !exists(2) && exists(3) && exists(4));
  json_t *list = sw_report_artifacts_json(g_store, 1, &err);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "state")), "deleted");
  ck_assert_ptr_nonnull(strstr(
      json_string_value(json_object_get(json_array_get(list, 0), "reason")), "keep_sweeps 2"));
  json_decref(list);
  ck_assert_int_eq(sw_artifact_retain(g_store, g_db, now, &err), 0); /* nothing left to do */
}
END_TEST

int main(void) {
  Suite *s = suite_create("artifact");
  TCase *tc = tcase_create("artifact");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, key_and_tokens);
  tcase_add_test(tc, expect_and_list);
  tcase_add_test(tc, retention_rules);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

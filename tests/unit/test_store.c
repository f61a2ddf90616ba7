/* test_store.c: Check suite for the SQLite store (coordinator/sw_store.h): schema creation and
 * pragmas, forward migration from a version-1 file, idempotent attempts with their child rows,
 * the statement cache, and clean errors for a full disk, a read-only store and a bad path. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_store.h"

static char g_dir[64];
static char g_db[128];

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw_test_storeXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/t.db", g_dir);
}

static void teardown(void) { sw_fs_rm_rf(g_dir, NULL); }

static int64_t q1(sw_store_t *s, const char *sql) {
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static const char *qs(sw_store_t *s, const char *sql, char *buf, size_t len) {
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return buf;
}

/* A sweep, a gate, a worker, a pair and one run, so attempts have something to refer to. */
static void seed_rows(sw_store_t *s) {
  struct sw_err err = {0};
  ck_assert_msg(
      sw_store_exec(s,
                    "INSERT INTO sweeps (id, name, kind, spec_yaml, spec_json, spec_sha256, "
                    "created_ms) VALUES (1, 'g', 'gate', 'y', '{}', 'h', 0);"
                    "INSERT INTO gates (id, sweep_id, name, metric, n_target, n_max) VALUES "
                    "(1, 1, 'g', 'train_s', 5, 8);"
                    "INSERT INTO workers (id, first_seen_ms, last_seen_ms) VALUES ('w1', 0, 0);"
                    "INSERT INTO pairs (id, sweep_id, gate_id, idx, ord, created_ms) VALUES "
                    "(1, 1, 1, 0, 'off-on', 0);"
                    "INSERT INTO runs (id, pair_id, arm, position, config_json, config_sha256) "
                    "VALUES (1, 1, 'off', 0, '{}', 'c');",
                    &err) == 0,
      "%s", err.msg);
}

START_TEST(open_creates_schema_with_pragmas) {
  struct sw_err err = {0};
  sw_store_t *s = NULL;
  ck_assert_msg(sw_store_open(g_db, NULL, &s, &err) == 0, "%s", err.msg);
  int v = 0;
  ck_assert_int_eq(sw_store_version(s, &v, &err), 0);
  ck_assert_int_eq(v, SW_STORE_SCHEMA_VERSION);
  char buf[32];
  ck_assert_str_eq(qs(s, "PRAGMA journal_mode", buf, sizeof buf), "wal");
  ck_assert_int_eq(q1(s, "PRAGMA foreign_keys"), 1);
  ck_assert_int_eq(q1(s, "PRAGMA synchronous"), 2); /* FULL */
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                         "('sweeps','gates','grid_points','pairs','runs','attempts','windows',"
                         "'kernels','checkpoints','leases','workers','events')"),
                   12);
  /* Foreign keys are enforced: a run of a missing pair is refused. */
  ck_assert_int_eq(sw_store_exec(s,
                                 "INSERT INTO runs (pair_id, arm, position, config_json, "
                                 "config_sha256) VALUES (77, 'off', 0, '{}', 'x')",
                                 &err),
                   SW_EDB);
  ck_assert_ptr_nonnull(strstr(err.msg, "FOREIGN KEY"));
  /* The statement cache hands back the same prepared statement for the same SQL. */
  static const char *const SQL = "SELECT COUNT(*) FROM sweeps";
  sqlite3_stmt *a, *b;
  ck_assert_int_eq(sw_store_stmt(s, SQL, &a, &err), 0);
  ck_assert_int_eq(sqlite3_step(a), SQLITE_ROW);
  ck_assert_int_eq(sw_store_stmt(s, SQL, &b, &err), 0);
  ck_assert_ptr_eq(a, b);
  ck_assert_int_eq(sqlite3_step(b), SQLITE_ROW); /* reset by the lookup */
  sqlite3_reset(b);
  /* A relaxed transaction lowers the safety level for itself only. */
  ck_assert_int_eq(sw_store_begin_relaxed(s, &err), 0);
  ck_assert_int_eq(q1(s, "PRAGMA synchronous"), 1); /* NORMAL */
  ck_assert_int_eq(sw_store_event(s, 1, 0, "t", "relaxed", &err), 0);
  ck_assert_int_eq(sw_store_commit(s, &err), 0);
  ck_assert_int_eq(q1(s, "PRAGMA synchronous"), 2);
  ck_assert_int_eq(sw_store_begin_relaxed(s, &err), 0);
  sw_store_rollback(s);
  ck_assert_int_eq(q1(s, "PRAGMA synchronous"), 2);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM events"), 1);
  static const char *const BAD = "SELECT nope FROM nowhere";
  ck_assert_int_eq(sw_store_stmt(s, BAD, &a, &err), SW_EDB);
  sw_store_close(&s);
  ck_assert_ptr_null(s);
  sw_store_close(&s); /* NULL-safe */
  sw_store_close(NULL);
}
END_TEST

START_TEST(migrates_v1_database_forward) {
  struct sw_err err = {0};
  struct sw_store_opts o;
  sw_store_opts_default(&o);
  o.target_version = 1;
  sw_store_t *s = NULL;
  ck_assert_msg(sw_store_open(g_db, &o, &s, &err) == 0, "%s", err.msg);
  int v = 0;
  ck_assert_int_eq(sw_store_version(s, &v, &err), 0);
  ck_assert_int_eq(v, 1);
  seed_rows(s);
  /* Version 1 has no priority column yet. */
  ck_assert_int_eq(sw_store_exec(s, "SELECT priority FROM sweeps", &err), SW_EDB);
  sw_store_close(&s);

  sw_err_clear(&err);
  ck_assert_msg(sw_store_open(g_db, NULL, &s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sw_store_version(s, &v, &err), 0);
  ck_assert_int_eq(v, SW_STORE_SCHEMA_VERSION);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM sweeps WHERE name = 'g' AND priority = 0"), 1);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'pairs_pending'"), 1);
  /* v3: windows say who was busy; attempts keep their flag reason and environment. */
  ck_assert_int_eq(sw_store_exec(s, "SELECT cpu_trainer, cpu_self, gpu_foreign FROM windows", &err),
                   0);
  ck_assert_int_eq(
      sw_store_exec(s, "SELECT flag_reason, env_before, run_start_wall_ms FROM attempts", &err), 0);
  sw_store_close(&s);

  /* A file from a newer build is refused, not damaged. */
  sqlite3 *raw = NULL;
  ck_assert_int_eq(sqlite3_open(g_db, &raw), SQLITE_OK);
  ck_assert_int_eq(sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(raw);
  ck_assert_int_eq(sw_store_open(g_db, NULL, &s, &err), SW_EDB);
  ck_assert_ptr_null(s);
  ck_assert_ptr_nonnull(strstr(err.msg, "newer"));
}
END_TEST

static const struct sw_window_sample W[2] = {
    {.t_ms = -1000, .load1 = 0.2, .cpu_other = 0.0, .cpu_total = 0.5, .mem_avail = 1e9},
    {.t_ms = 0, .load1 = 0.3, .cpu_other = 0.1, .cpu_total = 1.0, .mem_avail = 1e9}};

START_TEST(attempts_are_idempotent) {
  struct sw_err err = {0};
  sw_store_t *s = NULL;
  ck_assert_msg(sw_store_open(g_db, NULL, &s, &err) == 0, "%s", err.msg);
  seed_rows(s);
  const char *result =
      "{\"status\":\"ok\",\"trainer\":{\"binary_sha256\":\"t1\",\"shaders_sha256\":\"s1\"},"
      "\"scene\":{\"sha256\":\"sc\"},\"config_sha256\":\"cf\",\"metrics\":{\"train_s\":12.5,"
      "\"psnr_db\":30.1,\"iterations\":100},\"kernels\":[{\"name\":\"adam\",\"calls\":3,"
      "\"gpu_ms\":1.0,\"share\":0.5},{\"calls\":1}],\"checkpoints\":[{\"iter\":50,\"psnr_db\":20},"
      "{\"iter\":1e300},{\"iter\":-1},{\"iter\":2.5}]"
      "}";
  struct sw_attempt_rec rec = {.run_id = 1,
                               .attempt = 1,
                               .worker_id = "w1",
                               .status = SW_ATTEMPT_OK,
                               .result_json = result,
                               .pre = W,
                               .n_pre = 1,
                               .during = W + 1,
                               .n_during = 1};
  int dup = -1;
  /* Outside a transaction the call is refused: an ack must follow a commit. */
  ck_assert_int_eq(sw_store_put_attempt(s, &rec, &dup, &err), SW_ESTATE);
  sw_err_clear(&err);
  ck_assert_int_eq(sw_store_begin(s, &err), 0);
  ck_assert_msg(sw_store_put_attempt(s, &rec, &dup, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(dup, 0);
  ck_assert_int_eq(sw_store_commit(s, &err), 0);
  ck_assert_int_eq(sw_store_begin(s, &err), 0);
  ck_assert_int_eq(sw_store_put_attempt(s, &rec, &dup, &err), 0);
  ck_assert_int_eq(dup, 1);
  ck_assert_int_eq(sw_store_commit(s, &err), 0);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM attempts"), 1);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM windows WHERE phase = 'pre'"), 1);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM windows WHERE phase = 'during'"), 1);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM kernels"), 1); /* the nameless entry is skipped */
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM checkpoints WHERE iter = 50"), 1);
  /* Iterations that are not whole numbers in range are skipped, not converted. */
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM checkpoints"), 1);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM attempts WHERE train_s = 12.5 AND iterations = 100 "
                         "AND ssim IS NULL AND trainer_sha256 = 't1' AND shaders_sha256 = 's1' "
                         "AND scene_sha256 = 'sc' AND config_sha256 = 'cf'"),
                   1);
  /* A crashed run without any result is stored too, with empty metric columns. */
  struct sw_attempt_rec crash = {.run_id = 1,
                                 .attempt = 2,
                                 .worker_id = "w1",
                                 .status = SW_ATTEMPT_FAILED,
                                 .exit_status = 3,
                                 .result_json = "{not json",
                                 .error_text = "device lost"};
  ck_assert_int_eq(sw_store_begin(s, &err), 0);
  ck_assert_int_eq(sw_store_put_attempt(s, &crash, &dup, &err), 0);
  ck_assert_int_eq(sw_store_event(s, 5, 1, "note", "crash stored", &err), 0);
  ck_assert_int_eq(sw_store_commit(s, &err), 0);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM attempts WHERE status = 'failed' AND train_s IS "
                         "NULL AND exit_status = 3"),
                   1);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM events WHERE kind = 'note'"), 1);
  sw_store_close(&s);
}
END_TEST

START_TEST(full_disk_fails_cleanly_and_rolls_back) {
  struct sw_err err = {0};
  sw_store_t *s = NULL;
  ck_assert_msg(sw_store_open(g_db, NULL, &s, &err) == 0, "%s", err.msg);
  seed_rows(s);
  /* Cap the file at its current size: the next page SQLite needs is "disk full". */
  int64_t pages = q1(s, "PRAGMA page_count");
  char pragma[64];
  snprintf(pragma, sizeof pragma, "PRAGMA max_page_count = %lld", (long long)pages);
  ck_assert_int_eq(sw_store_exec(s, pragma, &err), 0);
  char *big = malloc(200000);
  memset(big, 'x', 199990);
  snprintf(big + 199990, 10, "\"}");
  memcpy(big, "{\"pad\":\"", 8);
  struct sw_attempt_rec rec = {
      .run_id = 1, .attempt = 1, .worker_id = "w1", .status = SW_ATTEMPT_OK, .result_json = big};
  int dup = 0;
  ck_assert_int_eq(sw_store_begin(s, &err), 0);
  int rc = sw_store_put_attempt(s, &rec, &dup, &err);
  if (rc == 0) rc = sw_store_commit(s, &err);
  sw_store_rollback(s);
  ck_assert_int_eq(rc, SW_EDB);
  ck_assert_msg(strstr(err.msg, "full") != NULL, "%s", err.msg);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM attempts"), 0);
  /* Space back: the same delivery now succeeds (the worker's resend). */
  ck_assert_int_eq(sw_store_exec(s, "PRAGMA max_page_count = 1000000", &err), 0);
  sw_err_clear(&err);
  ck_assert_int_eq(sw_store_begin(s, &err), 0);
  ck_assert_msg(sw_store_put_attempt(s, &rec, &dup, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sw_store_commit(s, &err), 0);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM attempts"), 1);
  free(big);
  sw_store_close(&s);
}
END_TEST

/* The readers' column helpers, the one place where a NULL column becomes "" or JSON null. */
START_TEST(column_readers) {
  sw_store_t *s = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_store_open(g_db, NULL, &s, &err) == 0, "%s", err.msg);
  static const char *const SQL = "SELECT NULL, 'text', 7, 2.5";
  sqlite3_stmt *st;
  ck_assert_int_eq(sw_store_stmt(s, SQL, &st, &err), 0);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_str_eq(sw_store_col_text(st, 0), "");
  ck_assert_str_eq(sw_store_col_text(st, 1), "text");
  json_t *n = sw_store_col_num(st, 0), *i = sw_store_col_num(st, 2), *r = sw_store_col_num(st, 3);
  ck_assert(json_is_null(n));
  ck_assert(json_is_integer(i) && json_integer_value(i) == 7); /* an integer stays one */
  ck_assert(json_is_real(r) && json_real_value(r) == 2.5);
  json_decref(n);
  json_decref(i);
  json_decref(r);
  sqlite3_reset(st);
  sw_store_close(&s);
}
END_TEST

START_TEST(read_only_and_bad_paths_give_clean_errors) {
  struct sw_err err = {0};
  sw_store_t *s = NULL;
  ck_assert_int_eq(sw_store_open(g_db, NULL, &s, &err), 0);
  seed_rows(s);
  sw_store_close(&s);
  struct sw_store_opts o;
  sw_store_opts_default(&o);
  o.read_only = 1;
  ck_assert_msg(sw_store_open(g_db, &o, &s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(q1(s, "SELECT COUNT(*) FROM sweeps"), 1);
  ck_assert_int_eq(sw_store_event(s, 1, 1, "x", "y", &err), SW_EDB);
  ck_assert_msg(strstr(err.msg, "readonly") || strstr(err.msg, "read-only") ||
                    strstr(err.msg, "read only"),
                "%s", err.msg);
  sw_store_close(&s);
  /* A database path inside a missing directory, and a directory as the database. */
  char path[200];
  snprintf(path, sizeof path, "%s/missing/dir/x.db", g_dir);
  sw_err_clear(&err);
  ck_assert_int_eq(sw_store_open(path, NULL, &s, &err), SW_EDB);
  ck_assert_ptr_null(s);
  ck_assert_ptr_nonnull(strstr(err.msg, "missing/dir/x.db"));
  sw_err_clear(&err);
  ck_assert_int_eq(sw_store_open(g_dir, NULL, &s, &err), SW_EDB);
  ck_assert_ptr_null(s);
  /* Read-only on a file that does not exist. */
  snprintf(path, sizeof path, "%s/none.db", g_dir);
  sw_err_clear(&err);
  ck_assert_int_eq(sw_store_open(path, &o, &s, &err), SW_EDB);
}
END_TEST

int main(void) {
  Suite *s = suite_create("store");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, open_creates_schema_with_pragmas);
  tcase_add_test(tc, migrates_v1_database_forward);
  tcase_add_test(tc, attempts_are_idempotent);
  tcase_add_test(tc, full_disk_fails_cleanly_and_rolls_back);
  tcase_add_test(tc, column_readers);
  tcase_add_test(tc, read_only_and_bad_paths_give_clean_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

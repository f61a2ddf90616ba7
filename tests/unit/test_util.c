/* test_util.c: Check suite for sw_util (errors, sha256, files). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sw_err.h"
#include "sw_fs.h"
#include "sw_sha256.h"

/* The running executable: an absolute path to this test binary, which exists; a buffer too
 * small is an error, not a truncated path. */
START_TEST(self_exe_path) {
  char path[4096];
  struct sw_err err = {0};
  ck_assert_msg(sw_fs_self_exe(path, sizeof path, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(path[0], '/');
  ck_assert_msg(strstr(path, "test_util") != NULL, "%s", path);
  ck_assert(sw_fs_exists(path));
  char tiny[4];
  struct sw_err e2 = {0};
  ck_assert_int_eq(sw_fs_self_exe(tiny, sizeof tiny, &e2), SW_EIO);
}
END_TEST

START_TEST(first_error_wins) {
  struct sw_err err = {0};
  ck_assert_int_eq(sw_err_set(&err, SW_EINVAL, "inner %d", 1), SW_EINVAL);
  sw_err_set(&err, SW_EIO, "outer");
  sw_err_prefix(&err, "loading %s", "x.yaml");
  ck_assert_int_eq(err.code, SW_EINVAL);
  ck_assert_str_eq(err.msg, "loading x.yaml: inner 1");
  ck_assert_int_eq(sw_err_set(NULL, SW_EIO, "ignored"), SW_EIO);
}
END_TEST

START_TEST(sha256_known_vectors) {
  char hex[SW_SHA256_HEX_LEN];
  sw_sha256_buf("abc", 3, hex);
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  sw_sha256_buf("", 0, hex);
  ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(atomic_write_and_read_back) {
  char dir[] = "/tmp/sw_test_utilXXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char sub[256], path[300];
  snprintf(sub, sizeof sub, "%s/a/b", dir);
  struct sw_err err = {0};
  ck_assert_int_eq(sw_fs_mkdir_p(sub, &err), 0);
  snprintf(path, sizeof path, "%s/f.txt", sub);
  ck_assert_int_eq(sw_fs_write_atomic(path, "abc", 3, &err), 0);
  char hex[SW_SHA256_HEX_LEN];
  ck_assert_int_eq(sw_sha256_file(path, hex, &err), 0);
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  char *data = NULL;
  size_t len = 0;
  ck_assert_int_eq(sw_fs_read_all(path, &data, &len, &err), 0);
  ck_assert_uint_eq(len, 3);
  ck_assert_str_eq(data, "abc");
  free(data);
  ck_assert_int_eq(sw_fs_rm_rf(dir, &err), 0);
  ck_assert_int_eq(sw_fs_exists(dir), 0);
  ck_assert_int_eq(sw_fs_read_all(path, &data, &len, &err), SW_ENOTFOUND);
  ck_assert(strstr(err.msg, "f.txt") != NULL);
}
END_TEST

/* A colon-separated search list: the first folder holding the right kind of entry wins; an
 * executable must be a regular file with the x bit, a data set a directory. */
/* A secret file is made once, mode 0600, in a folder made for it; a second caller gets the first
 * secret, not its own; no temporary file stays behind. */
START_TEST(secret_made_once_and_private) {
  char dir[] = "/tmp/sw_secret_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof path, "%s/sub/key", dir);
  struct sw_err err = {0};
  char *a = NULL, *b = NULL;
  size_t la = 0, lb = 0;
  ck_assert_int_eq(sw_fs_secret(path, "first", 5, &a, &la, &err), 0);
  ck_assert_int_eq(sw_fs_secret(path, "second", 6, &b, &lb, &err), 0);
  ck_assert_uint_eq(la, 5);
  ck_assert_uint_eq(lb, 5);
  ck_assert_str_eq(a, "first");
  ck_assert_str_eq(b, "first");
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0600);
  char sub[128];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  ck_assert_int_eq(sw_fs_rm_rf(path, &err), 0);
  ck_assert_int_eq(rmdir(sub), 0); /* empty: no temporary file left */
  free(a);
  free(b);
  /* An unwritable place is an error that names it. */
  ck_assert_int_ne(sw_fs_secret("/proc/sw-no/key", "x", 1, &a, &la, &err), 0);
  ck_assert_ptr_nonnull(strstr(err.msg, "/proc/sw-no"));
  ck_assert_int_eq(sw_fs_rm_rf(dir, &err), 0);
}
END_TEST

START_TEST(find_in_search_lists) {
  char dir[] = "/tmp/sw_test_findXXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char a[300], b[300], p[400], list[700], out[600];
  struct sw_err err = {0};
  snprintf(a, sizeof a, "%s/a", dir);
  snprintf(b, sizeof b, "%s/b", dir);
  snprintf(p, sizeof p, "%s/tool/x", a); /* a/tool is a directory, not an executable */
  ck_assert_int_eq(sw_fs_mkdir_p(p, &err), 0);
  snprintf(p, sizeof p, "%s/tool", b);
  ck_assert_int_eq(sw_fs_mkdir_p(b, &err), 0);
  ck_assert_int_eq(sw_fs_write_atomic(p, "#!/bin/sh\n", 10, &err), 0);
  snprintf(list, sizeof list, "%s::%s", a, b);
  ck_assert_int_eq(sw_fs_find_in(list, "tool", SW_FS_FIND_EXEC, out, sizeof out), 0);
  ck_assert_int_eq(chmod(p, 0755), 0);
  ck_assert_int_eq(sw_fs_find_in(list, "tool", SW_FS_FIND_EXEC, out, sizeof out), 1);
  ck_assert_str_eq(out, p);
  ck_assert_int_eq(sw_fs_find_in(list, "tool", SW_FS_FIND_DIR, out, sizeof out), 1);
  snprintf(p, sizeof p, "%s/tool", a);
  ck_assert_str_eq(out, p);
  ck_assert_int_eq(sw_fs_find_in(list, "missing", SW_FS_FIND_DIR, out, sizeof out), 0);
  ck_assert_int_eq(sw_fs_find_in(NULL, "tool", SW_FS_FIND_EXEC, out, sizeof out), 0);
  ck_assert_int_eq(sw_fs_rm_rf(dir, &err), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, first_error_wins);
  tcase_add_test(tc, sha256_known_vectors);
  tcase_add_test(tc, atomic_write_and_read_back);
  tcase_add_test(tc, self_exe_path);
  tcase_add_test(tc, find_in_search_lists);
  tcase_add_test(tc, secret_made_once_and_private);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

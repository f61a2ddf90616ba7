/* test_gpu_sampler.c: Check suite for the GPU sampler (worker/sw_gpu.h) against the fake NVML
 * of tests/fake_nvml.c, loaded through SW_NVML_LIB: a missing or failing NVML is "no GPU", the
 * figures of the trainer's GPU, the choice of that GPU, foreign processes and the attribution
 * rule for pids NVML reports but we cannot match, buffer growth for long process lists, partial
 * and total NVML failures, and the three process-list layouts (v1, v3, R530's v3). Each test
 * runs in its own process (Check's fork mode), so the environment it sets stays its own. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_gpu.h"

#if !defined(FAKE_NVML) || !defined(FAKE_NVML_CC) || !defined(FAKE_NVML_V1)
#error "FAKE_NVML, FAKE_NVML_CC and FAKE_NVML_V1 must name the fake NVML libraries"
#endif

static char log_path[64];

/* A clean environment that loads lib and logs its init / shutdown calls. */
static void use_fake(const char *lib) {
  static const char *const vars[] = {
      "SW_NVML",        "SW_GPU_INDEX",   "FAKE_NVML_DEVICES",   "FAKE_NVML_PROCS",
      "FAKE_NVML_UTIL", "FAKE_NVML_TEMP", "FAKE_NVML_FAIL_INIT", "FAKE_NVML_FAIL"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  setenv("SW_NVML_LIB", lib, 1);
  snprintf(log_path, sizeof log_path, "/tmp/sw_test_gpu_%ld.log", (long)getpid());
  unlink(log_path);
  setenv("FAKE_NVML_LOG", log_path, 1);
}

/* What the fake logged ("init\nshutdown\n"), "" when nothing. */
static const char *fake_log(void) {
  static char text[256];
  text[0] = '\0';
  FILE *f = fopen(log_path, "r");
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
  }
  return text;
}

START_TEST(absent_or_disabled_nvml_is_no_gpu) {
  use_fake("/nonexistent/libnvidia-ml.so.1");
  sw_gpu_t *g = (sw_gpu_t *)&g; /* must be overwritten */
  struct sw_err err = {0};
  ck_assert_int_eq(sw_gpu_open(&g, &err), 0);
  ck_assert_ptr_null(g);
  ck_assert_int_eq(err.code, 0);
  /* The NULL handle is the "no GPU" sampler. */
  ck_assert_int_eq(sw_gpu_count(g), 0);
  ck_assert_ptr_null(sw_gpu_name(g, 0));
  struct sw_gpu_sample s;
  ck_assert_int_eq(sw_gpu_sample(g, NULL, NULL, &s, &err), SW_ENOTFOUND);
  ck_assert(isnan(s.util_pct) && s.n_foreign == -1);
  sw_gpu_close(&g);
  sw_gpu_close(NULL);

  /* SW_NVML=0 does not even load a library that is there. */
  use_fake(FAKE_NVML);
  setenv("SW_NVML", "0", 1);
  ck_assert_int_eq(sw_gpu_open(&g, &err), 0);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(fake_log(), "");
}
END_TEST

#if defined(__linux__)
/* Our trainer's pids, for is_ours. */
struct ours {
  int n;
  int32_t pid[4];
};

static int is_ours(void *ctx, int32_t pid) {
  const struct ours *o = ctx;
  for (int i = 0; i < o->n; i++)
    if (o->pid[i] == pid) return 1;
  return 0;
}

static sw_gpu_t *open_ok(void) {
  sw_gpu_t *g = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_gpu_open(&g, &err), 0);
  ck_assert_ptr_nonnull(g);
  return g;
}

/* One sample that must succeed with no note in err. */
static struct sw_gpu_sample sample_ok(sw_gpu_t *g, struct ours *o) {
  struct sw_gpu_sample s;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_gpu_sample(g, o ? is_ours : NULL, o, &s, &err), 0);
  ck_assert_msg(err.code == 0, "unexpected note: %s", err.msg);
  return s;
}

START_TEST(init_failure_is_no_gpu) {
  use_fake(FAKE_NVML);
  setenv("FAKE_NVML_FAIL_INIT", "1", 1);
  sw_gpu_t *g = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_gpu_open(&g, &err), 0);
  ck_assert_ptr_null(g);
  ck_assert_int_eq(err.code, 0);
  ck_assert_str_eq(fake_log(), "init\n"); /* no nvmlShutdown is owed for a failed init */

  /* A driver that sees no GPU is no GPU either, and NVML is shut down again. */
  use_fake(FAKE_NVML);
  setenv("FAKE_NVML_DEVICES", "0", 1);
  ck_assert_int_eq(sw_gpu_open(&g, &err), 0);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(fake_log(), "init\nshutdown\n");
}
END_TEST

START_TEST(one_gpu_trainer_alone) {
  use_fake(FAKE_NVML);
  setenv("FAKE_NVML_PROCS", "0:4242", 1);
  setenv("FAKE_NVML_UTIL", "77", 1);
  setenv("FAKE_NVML_TEMP", "65", 1);
  sw_gpu_t *g = open_ok();
  ck_assert_int_eq(sw_gpu_count(g), 1);
  ck_assert_str_eq(sw_gpu_name(g, 0), "Fake GPU 0");
  ck_assert_str_eq(sw_gpu_uuid(g, 0), "GPU-fake-0000");
  ck_assert_ptr_null(sw_gpu_name(g, 1));
  struct ours o = {1, {4242}};
  struct sw_gpu_sample s = sample_ok(g, &o);
  ck_assert_int_eq(s.device, 0);
  ck_assert_double_eq(s.util_pct, 77);
  ck_assert_double_eq(s.mem_util_pct, 38);
  ck_assert_double_eq(s.sm_mhz, 1410);
  ck_assert_double_eq(s.temp_c, 65);
  ck_assert_double_eq_tol(s.power_w, 123.456, 1e-9);
  ck_assert_uint_eq(s.throttle, 0x4);
  ck_assert_int_eq(s.n_procs, 1);
  ck_assert_int_eq(s.n_foreign, 0);
  ck_assert_int_eq(s.foreign_pid[0], 0);
  /* Figures are read at call time: a second sample sees the new utilisation. */
  setenv("FAKE_NVML_UTIL", "12", 1);
  s = sample_ok(g, &o);
  ck_assert_double_eq(s.util_pct, 12);
  sw_gpu_close(&g);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(fake_log(), "init\nshutdown\n");
}
END_TEST

START_TEST(foreign_process_is_counted) {
  use_fake(FAKE_NVML);
  /* Our trainer is in both lists (a Vulkan compute + graphics context) and counts once; the
   * foreign process 999 is in the graphics list and in the compute list, and counts once. */
  setenv("FAKE_NVML_PROCS", "0:4242:cg,0:999:g,0:999", 1);
  sw_gpu_t *g = open_ok();
  struct ours o = {1, {4242}};
  struct sw_gpu_sample s = sample_ok(g, &o);
  ck_assert_int_eq(s.n_procs, 2);
  ck_assert_int_eq(s.n_foreign, 1);
  ck_assert_int_eq(s.foreign_pid[0], 999);
  ck_assert_int_eq(s.foreign_pid[1], 0);
  /* With no trainer running (is_ours NULL) everything on the GPU is foreign. */
  s = sample_ok(g, NULL);
  ck_assert_int_eq(s.n_foreign, 2);
  ck_assert_int_eq(s.foreign_pid[0], 999);
  ck_assert_int_eq(s.foreign_pid[1], 4242);
  sw_gpu_close(&g);
}
END_TEST

START_TEST(the_gpu_with_our_process_is_chosen) {
  use_fake(FAKE_NVML);
  setenv("FAKE_NVML_DEVICES", "2", 1);
  setenv("FAKE_NVML_TEMP", "50", 1);
  setenv("FAKE_NVML_PROCS", "0:500,0:501,1:4242", 1);
  sw_gpu_t *g = open_ok();
  ck_assert_int_eq(sw_gpu_count(g), 2);
  ck_assert_str_eq(sw_gpu_name(g, 1), "Fake GPU 1");
  struct ours o = {1, {4242}};
  struct sw_gpu_sample s = sample_ok(g, &o);
  ck_assert_int_eq(s.device, 1);
  ck_assert_double_eq(s.temp_c, 51); /* GPU 1's own figures */
  ck_assert_double_eq(s.sm_mhz, 1420);
  ck_assert_int_eq(s.n_procs, 1);
  ck_assert_int_eq(s.n_foreign, 0); /* 500 and 501 use the other GPU */
  sw_gpu_close(&g);
}
END_TEST

START_TEST(sw_gpu_index_picks_the_gpu_without_ours) {
  use_fake(FAKE_NVML);
  setenv("FAKE_NVML_DEVICES", "3", 1);
  setenv("FAKE_NVML_PROCS", "0:500,2:600", 1);
  sw_gpu_t *g = open_ok();
  struct sw_gpu_sample s = sample_ok(g, NULL);
  ck_assert_int_eq(s.device, 0); /* no SW_GPU_INDEX: GPU 0 */
  ck_assert_int_eq(s.foreign_pid[0], 500);
  sw_gpu_close(&g);

  setenv("SW_GPU_INDEX", "2", 1);
  g = open_ok();
  s = sample_ok(g, NULL);
  ck_assert_int_eq(s.device, 2);
  ck_assert_int_eq(s.n_foreign, 1);
  ck_assert_int_eq(s.foreign_pid[0], 600);
  sw_gpu_close(&g);

  /* An index NVML does not see is the user's error, and NVML is shut down again. */
  unlink(log_path);
  setenv("SW_GPU_INDEX", "3", 1);
  struct sw_err err = {0};
  ck_assert_int_eq(sw_gpu_open(&g, &err), SW_EINVAL);
  ck_assert_ptr_null(g);
  ck_assert_ptr_nonnull(strstr(err.msg, "SW_GPU_INDEX=3"));
  ck_assert_str_eq(fake_log(), "init\nshutdown\n");
  setenv("SW_GPU_INDEX", "1x", 1);
  sw_err_clear(&err);
  ck_assert_int_eq(sw_gpu_open(&g, &err), SW_EINVAL);
}
END_TEST

START_TEST(process_buffer_grows) {
  use_fake(FAKE_NVML);
  setenv("FAKE_NVML_PROCS", "0:4242,0:10000*40", 1); /* 41 processes, more than 16 */
  sw_gpu_t *g = open_ok();
  struct ours o = {1, {4242}};
  struct sw_gpu_sample s = sample_ok(g, &o);
  ck_assert_int_eq(s.n_procs, 41);
  ck_assert_int_eq(s.n_foreign, 40);
  for (int k = 0; k < 4; k++) ck_assert_int_eq(s.foreign_pid[k], 10000 + k);
  /* Past SW_GPU_MAX_PROCS the list is unreadable: counts unknown, a note, still a sample. */
  setenv("FAKE_NVML_PROCS", "0:4242,0:10000*2000", 1);
  struct sw_err err = {0};
  ck_assert_int_eq(sw_gpu_sample(g, is_ours, &o, &s, &err), 0);
  ck_assert_int_eq(s.n_procs, -1);
  ck_assert_int_eq(s.n_foreign, -1);
  ck_assert_double_eq(s.sm_mhz, 1410);
  ck_assert_int_eq(err.code, SW_EDEVICE);
  ck_assert_ptr_nonnull(strstr(err.msg, "nvmlDeviceGetComputeRunningProcesses_v3"));
  /* And back to a short list: the grown buffer is reused. */
  setenv("FAKE_NVML_PROCS", "0:4242,0:77", 1);
  s = sample_ok(g, &o);
  ck_assert_int_eq(s.n_foreign, 1);
  ck_assert_int_eq(s.foreign_pid[0], 77);
  sw_gpu_close(&g);
}
END_TEST

START_TEST(unmatched_pids_cannot_be_attributed) {
  use_fake(FAKE_NVML);
  /* A container: NVML reports host pids, and our trainer (pid 42 here) is not among them. */
  setenv("FAKE_NVML_PROCS", "0:3000001,0:3000002", 1);
  sw_gpu_t *g = open_ok();
  struct ours o = {1, {42}};
  struct sw_gpu_sample s = sample_ok(g, &o);
  ck_assert_int_eq(s.n_procs, 2);
  ck_assert_int_eq(s.n_foreign, -1);
  ck_assert_int_eq(s.foreign_pid[0], 0);
  /* No trainer runs: the same processes are foreign. */
  s = sample_ok(g, NULL);
  ck_assert_int_eq(s.n_foreign, 2);
  ck_assert_int_eq(s.foreign_pid[1], 3000002);
  /* A trainer runs but the GPU lists nobody: nothing foreign. */
  unsetenv("FAKE_NVML_PROCS");
  s = sample_ok(g, &o);
  ck_assert_int_eq(s.n_procs, 0);
  ck_assert_int_eq(s.n_foreign, 0);
  sw_gpu_close(&g);
}
END_TEST

START_TEST(partial_data_is_a_sample) {
  use_fake(FAKE_NVML);
  setenv("FAKE_NVML_PROCS", "0:4242,0:999", 1);
  setenv("FAKE_NVML_FAIL", "power,temp", 1);
  sw_gpu_t *g = open_ok();
  struct ours o = {1, {4242}};
  struct sw_gpu_sample s;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_gpu_sample(g, is_ours, &o, &s, &err), 0);
  ck_assert(isnan(s.power_w) && isnan(s.temp_c));
  ck_assert_double_eq(s.util_pct, 50);
  ck_assert_int_eq(s.n_foreign, 1);
  ck_assert_int_eq(err.code, SW_EDEVICE);
  ck_assert_msg(strstr(err.msg, "nvmlDeviceGetTemperature") &&
                    strstr(err.msg, "Insufficient Permissions"),
                "%s", err.msg);

  /* Unreadable process lists: the figures still come, the counts are unknown. */
  setenv("FAKE_NVML_FAIL", "procs", 1);
  sw_err_clear(&err);
  ck_assert_int_eq(sw_gpu_sample(g, is_ours, &o, &s, &err), 0);
  ck_assert_int_eq(s.n_procs, -1);
  ck_assert_int_eq(s.n_foreign, -1);
  ck_assert_double_eq(s.power_w, 123.456);
  ck_assert_ptr_nonnull(strstr(err.msg, "RunningProcesses"));

  /* A GPU that answers nothing: the sample fails with the reason. */
  setenv("FAKE_NVML_FAIL", "all", 1);
  sw_err_clear(&err);
  ck_assert_int_eq(sw_gpu_sample(g, is_ours, &o, &s, &err), SW_EDEVICE);
  ck_assert_ptr_nonnull(strstr(err.msg, "GPU is lost"));
  ck_assert(isnan(s.util_pct) && s.throttle == SW_GPU_THROTTLE_UNKNOWN && s.n_procs == -1);
  sw_gpu_close(&g);
}
END_TEST

/* The same foreign-process sample through another process-list layout. */
static void check_layout(const char *lib) {
  use_fake(lib);
  setenv("FAKE_NVML_PROCS", "0:4242,0:777,0:778:g,0:779,0:780,0:781", 1);
  sw_gpu_t *g = open_ok();
  struct ours o = {1, {4242}};
  struct sw_gpu_sample s = sample_ok(g, &o);
  ck_assert_int_eq(s.n_procs, 6);
  ck_assert_int_eq(s.n_foreign, 5);
  for (int k = 0; k < 4; k++) ck_assert_int_eq(s.foreign_pid[k], 777 + k);
  ck_assert_uint_eq(s.throttle, 0x4);
  ck_assert_double_eq(s.sm_mhz, 1410);
  sw_gpu_close(&g);
  ck_assert_str_eq(fake_log(), "init\nshutdown\n");
}

START_TEST(old_driver_v1_layout) { check_layout(FAKE_NVML_V1); }
END_TEST

START_TEST(r530_v3_layout_with_cc_memory) { check_layout(FAKE_NVML_CC); }
END_TEST
#endif /* __linux__ */

int main(void) {
  Suite *s = suite_create("gpu_sampler");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
#if defined(__linux__)
  tcase_add_test(tc, absent_or_disabled_nvml_is_no_gpu);
  tcase_add_test(tc, init_failure_is_no_gpu);
  tcase_add_test(tc, one_gpu_trainer_alone);
  tcase_add_test(tc, foreign_process_is_counted);
  tcase_add_test(tc, the_gpu_with_our_process_is_chosen);
  tcase_add_test(tc, sw_gpu_index_picks_the_gpu_without_ours);
  tcase_add_test(tc, process_buffer_grows);
  tcase_add_test(tc, unmatched_pids_cannot_be_attributed);
  tcase_add_test(tc, partial_data_is_a_sample);
  tcase_add_test(tc, old_driver_v1_layout);
  tcase_add_test(tc, r530_v3_layout_with_cc_memory);
#else
  /* NVML exists only on Linux: elsewhere every open is "no GPU". */
  tcase_add_test(tc, absent_or_disabled_nvml_is_no_gpu);
#endif
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

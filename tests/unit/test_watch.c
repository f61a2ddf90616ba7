/* test_watch.c: Check suite for `splatsweep watch`'s rendering (read/sw_watch.h): which
 * sweep it follows, the exit code a finished sweep gives, and the screen drawn from a status
 * JSON (a gate bar with the forming verdict, a worker bar with the current run's iterations). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sw_watch.h"

static json_t *status(const char *sweeps) {
  char text[4000];
  snprintf(text, sizeof text,
           "{\"sweeps\": %s, \"coordinator\": {\"sessions\": ["
           "{\"id\": \"w1\", \"run\": 13, \"sweep\": 2, \"arm\": \"on\", \"iter\": 250, "
           "\"iterations\": 1000, \"train_s\": 3.5},"
           "{\"id\": \"w2\", \"run\": 0, \"iter\": 0, \"train_s\": 0}]}}",
           sweeps);
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  ck_assert_msg(j != NULL, "%s", je.text);
  return j;
}

#define GATE(verdict)                                                                              \
  "{\"name\": \"g\", \"status\": \"running\", \"verdict\": " verdict ", \"n\": 4, \"max\": 8, "    \
  "\"looks\": 1, \"pairs\": {\"done\": 2, \"total\": 4, \"abandoned\": 0}, \"forming\": "          \
  "{\"verdict\": \"inconclusive\", \"effect_pct\": -4.5, \"interval_pct\": [-9.0, 0.5], "          \
  "\"delta\": -0.045, \"threshold\": 0.01, \"guard_pass\": true, \"decision\": \"continue\"}}"

START_TEST(test_pick_and_outcome) {
  json_t *st = status("[{\"id\": 1, \"status\": \"done\", \"gates\": []},"
                      " {\"id\": 2, \"status\": \"running\", \"gates\": [" GATE(
                          "null") "]},"
                                  " {\"id\": 3, \"status\": \"done\", \"gates\": []}]");
  /* No id: the newest running sweep, not the newest. */
  ck_assert_int_eq(json_integer_value(json_object_get(sw_watch_pick(st, 0), "id")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(sw_watch_pick(st, 3), "id")), 3);
  ck_assert_ptr_null(sw_watch_pick(st, 9));
  ck_assert_int_eq(sw_watch_outcome(sw_watch_pick(st, 2)), -1);
  json_decref(st);
  const char *cases[][2] = {
      {"{\"status\": \"done\", \"gates\": [{\"verdict\": \"adopt\"}]}", "0"},
      {"{\"status\": \"done\", \"gates\": [{\"verdict\": \"adopt\"}, "
       "{\"verdict\": \"inconclusive\"}]}",
       "4"},
      {"{\"status\": \"done\", \"gates\": [{\"verdict\": \"inconclusive\"}, "
       "{\"verdict\": \"reject\"}]}",
       "3"},
      {"{\"status\": \"done\", \"gates\": [{\"verdict\": null}]}", "4"},
      {"{\"status\": \"failed\", \"gates\": [{\"verdict\": \"adopt\"}]}", "1"},
      {"{\"status\": \"cancelled\", \"gates\": []}", "1"},
      {"{\"status\": \"done\", \"kind\": \"grid\", \"gates\": []}", "0"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *sw = json_loads(cases[i][0], 0, NULL);
    ck_assert_msg(sw_watch_outcome(sw) == atoi(cases[i][1]), "%s: %d", cases[i][0],
                  sw_watch_outcome(sw));
    json_decref(sw);
  }
}
END_TEST

START_TEST(test_render_bars) {
  json_t *st = status("[{\"id\": 2, \"name\": \"s\", \"kind\": \"gate\", \"status\": \"running\", "
                      "\"pairs\": {\"done\": 2, \"total\": 4}, \"gates\": [" GATE("null") "]}]");
  char *screen = sw_watch_render(st, sw_watch_pick(st, 2), 64);
  ck_assert_ptr_nonnull(screen);
  /* 64 columns leave 20 for a bar: the gate is half done, the worker a quarter. */
  ck_assert_msg(strstr(screen, "[##########----------] 2/4 pairs (max 8), looks 1"), "%s", screen);
  ck_assert_msg(strstr(screen, "forming inconclusive: effect -4.50% [-9.00, +0.50], delta -0.0450 "
                               "vs threshold 0.0100, guard pass, look: continue"),
                "%s", screen);
  ck_assert_msg(
      strstr(screen, "worker w1            [#####---------------] iter 250/1000  run 13 (on)"),
      "%s", screen);
  ck_assert_msg(strstr(screen, "1 worker(s) on this sweep, 1 other session(s)"), "%s", screen);
  ck_assert_ptr_null(strstr(screen, "w2"));
  free(screen);
  json_decref(st);
}
END_TEST

int main(void) {
  Suite *s = suite_create("watch");
  TCase *tc = tcase_create("watch");
  tcase_add_test(tc, test_pick_and_outcome);
  tcase_add_test(tc, test_render_bars);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

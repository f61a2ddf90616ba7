/* sw_clock.c: clock helpers over clock_gettime. */
#include "sw_clock.h"

#include <stdio.h>
#include <time.h>

int64_t sw_clock_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t sw_clock_mono_ms(void) { return sw_clock_mono_ns() / 1000000; }

int64_t sw_clock_wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sw_clock_iso8601(int64_t wall_ms, char *buf, unsigned len) {
  time_t s = (time_t)(wall_ms / 1000);
  struct tm tm;
  gmtime_r(&s, &tm);
  snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(wall_ms % 1000));
}

/* sw_log.c: stderr logger. The level and component are process-wide settings made once at
 * start-up by main(); logging itself holds no other state. */
#include "sw_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static int log_level = -1;
static char log_component[64] = "splatsweep";

static int level_from_env(void) {
  const char *s = getenv("SW_LOG");
  if (!s) return SW_LOG_INFO;
  if (!strcmp(s, "error")) return SW_LOG_ERROR;
  if (!strcmp(s, "warn")) return SW_LOG_WARN;
  if (!strcmp(s, "debug")) return SW_LOG_DEBUG;
  return SW_LOG_INFO;
}

void sw_log_set_level(enum sw_log_level level) { log_level = (int)level; }

int sw_log_enabled(enum sw_log_level level) {
  if (log_level < 0) log_level = level_from_env();
  return (int)level <= log_level;
}

void sw_log_set_component(const char *name) {
  snprintf(log_component, sizeof log_component, "%s", name ? name : "");
}

void sw_log(enum sw_log_level level, const char *fmt, ...) {
  static const char *names[] = {"ERROR", "WARN", "INFO", "DEBUG"};
  if (log_level < 0) log_level = level_from_env();
  if ((int)level > log_level) return;
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  gmtime_r(&tv.tv_sec, &tm);
  char line[2048];
  int n = snprintf(line, sizeof line, "%02d:%02d:%02d.%03d %-5s [%s] ", tm.tm_hour, tm.tm_min,
                   tm.tm_sec, (int)(tv.tv_usec / 1000), names[level], log_component);
  if (n < 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s\n", line);
}

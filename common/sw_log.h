/* sw_log.h: leveled logging to stderr with a UTC timestamp and the component name.
 * The level comes from SW_LOG (error|warn|info|debug) or sw_log_set_level(). */
#ifndef SW_LOG_H
#define SW_LOG_H

enum sw_log_level { SW_LOG_ERROR = 0, SW_LOG_WARN = 1, SW_LOG_INFO = 2, SW_LOG_DEBUG = 3 };

void sw_log_set_level(enum sw_log_level level);
/* Whether a message of this level would be printed (for work done only to log it). */
int sw_log_enabled(enum sw_log_level level);
/* Component name printed in every line (e.g. "coordinator", "worker w1"); borrowed, copied. */
void sw_log_set_component(const char *name);
void sw_log(enum sw_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define sw_log_error(...) sw_log(SW_LOG_ERROR, __VA_ARGS__)
#define sw_log_warn(...) sw_log(SW_LOG_WARN, __VA_ARGS__)
#define sw_log_info(...) sw_log(SW_LOG_INFO, __VA_ARGS__)
#define sw_log_debug(...) sw_log(SW_LOG_DEBUG, __VA_ARGS__)

#endif

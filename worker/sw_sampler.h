/* sw_sampler.h: the worker's load sampler and the pre-run quiet wait.
 *
 * A sample reads /proc/loadavg (load1), /proc/stat (CPU jiffies of the whole machine) and
 * /proc/PID/stat of every process in the trainer's process group, so it can say how many cores
 * were busy outside the trainer since the previous sample. That number, not the load average,
 * is what separates "the trainer is busy" from "something else is stealing the machine".
 * The /proc root is a parameter so tests can feed prepared files. On macOS (no /proc) the same
 * numbers come from Mach host statistics, getloadavg and libproc (see sw_sampler.c). */
#ifndef SW_SAMPLER_H
#define SW_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>

#include "sw_err.h"

struct sw_load_sample {
  int64_t t_ms;     /* monotonic time of the sample */
  double load1;     /* 1-minute load average */
  double cpu_total; /* cores busy (all processes) since the previous sample */
  double cpu_other; /* cores busy outside the trainer's process group since the previous sample */
  double mem_avail; /* MemAvailable in bytes */
};

typedef struct sw_sampler sw_sampler_t;

/* proc_root: "/proc" normally (borrowed, copied). */
int sw_sampler_new(const char *proc_root, sw_sampler_t **out, struct sw_err *err);
void sw_sampler_destroy(sw_sampler_t **self_p);
/* Takes one sample at monotonic time now_ms. trainer_pgid is the trainer's process group
 * (0 when no trainer runs). The first sample after creation (or after the trainer group
 * changes) has cpu_total/cpu_other computed over the interval since the previous call anyway;
 * the very first one reports 0 for both. Returns 0 or SW_EIO. */
int sw_sampler_sample(sw_sampler_t *self, pid_t trainer_pgid, int64_t now_ms,
                      struct sw_load_sample *out, struct sw_err *err);
/* Number of online cores seen in /proc/stat. */
int sw_sampler_cores(const sw_sampler_t *self);

/* The pre-run quiet wait: the machine must stay below both thresholds for settle_ms in a row;
 * the wait gives up after max_wait_ms (the run then starts and its pre-run window shows why). */
struct sw_quiet {
  double load1_max, cpu_other_max;
  int64_t settle_ms, max_wait_ms;
  int64_t started_ms;     /* when the wait began */
  int64_t quiet_since_ms; /* -1 while not quiet */
};
enum sw_quiet_state { SW_QUIET_WAIT = 0, SW_QUIET_READY = 1, SW_QUIET_GAVE_UP = 2 };
void sw_quiet_begin(struct sw_quiet *q, double load1_max, double cpu_other_max, int64_t settle_ms,
                    int64_t max_wait_ms, int64_t now_ms);
/* Feeds one sample; returns an sw_quiet_state. */
int sw_quiet_feed(struct sw_quiet *q, const struct sw_load_sample *s);

#endif

/* sw_sampler.h: the worker's load sampler and the pre-run quiet wait.
 *
 * A sample says how many cores were busy since the previous sample and who used them:
 *  - the trainer: its whole process tree (every process in its process group or descending from
 *    it) for its whole life, its last interval and its exit included. A process that exits takes
 *    its CPU time out of /proc, so the trainer's reaped time is found where the kernel moves it:
 *    into the worker's own cutime/cstime when the worker reaps it. Between
 *    sw_sampler_trainer_begin and sw_sampler_trainer_end the growth of the worker's child time
 *    is the trainer's; after the end it is folded away, so it never shows as anyone else's;
 *  - self: splatsweep's own processes: the tree under the self root (the worker, or in local
 *    mode the `splatsweep local` process with its in-process coordinator and every local
 *    worker), restricted to the process groups of the root and of this worker, so trainers
 *    (which get their own process group) never count as self; the scene preparation child does;
 *  - other: the rest of the machine's busy time, i.e. what a foreign process used.
 * Busy time comes from /proc/stat; process times from /proc/PID/stat (Linux), from libproc and
 * getrusage (macOS). The /proc root is a parameter so tests can feed prepared files.
 *
 * GPU users: on Linux the sampler also counts processes that are not ours holding a GPU device
 * node open (/dev/nvidiaN, /dev/dri/renderD*), judged against the nodes the trainer holds (or
 * held last): a second process on the trainer's GPU. This works inside containers, where NVML
 * may list no processes at all. See sw_load_sample.gpu_users. */
#ifndef SW_SAMPLER_H
#define SW_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>

#include "sw_err.h"

struct sw_load_sample {
  int64_t t_ms;       /* monotonic time of the sample */
  double load1;       /* 1-minute load average */
  double cpu_total;   /* cores busy (all processes) since the previous sample */
  double cpu_trainer; /* ... in the trainer's process tree */
  double cpu_self;    /* ... in splatsweep's own processes */
  double cpu_other;   /* ... everywhere else: cpu_total - cpu_trainer - cpu_self, >= 0 */
  double mem_avail;   /* MemAvailable in bytes */
  int gpu_users;      /* processes not ours holding the trainer's GPU device node; -1 unknown
                       * (no /proc fd access, not Linux, or no GPU node known yet) */
};

typedef struct sw_sampler sw_sampler_t;

/* proc_root: "/proc" normally (borrowed, copied). self_pid is this worker's pid (the process
 * that reaps the trainer); self_root the root of splatsweep's own process tree (self_pid, or in
 * local mode the `splatsweep local` process). 0 for either means getpid(). */
int sw_sampler_new(const char *proc_root, pid_t self_pid, pid_t self_root, sw_sampler_t **out,
                   struct sw_err *err);
void sw_sampler_destroy(sw_sampler_t **self_p);

/* Starts attributing to a trainer whose process group (and leader pid) is pgid. Call right
 * after the trainer was forked, before its first sample. Returns 0 or SW_EIO. */
int sw_sampler_trainer_begin(sw_sampler_t *self, pid_t pgid, struct sw_err *err);
/* Ends the attribution after the trainer was reaped and its last sample was taken: the
 * trainer's reaped CPU time leaves the worker's child time for good. Returns 0 or SW_EIO. */
int sw_sampler_trainer_end(sw_sampler_t *self, struct sw_err *err);
/* Takes one sample at monotonic time now_ms. The first sample after creation reports 0 busy
 * cores (no interval yet). Returns 0 or SW_EIO. */
int sw_sampler_sample(sw_sampler_t *self, int64_t now_ms, struct sw_load_sample *out,
                      struct sw_err *err);
/* Restarts the interval at now without recording a sample (after the worker's own burst of
 * work, e.g. before a settle window starts). Returns 0 or SW_EIO. */
int sw_sampler_prime(sw_sampler_t *self, int64_t now_ms, struct sw_err *err);
/* 1 when pid was the trainer's or splatsweep's own in the latest sample (for GPU process
 * attribution), else 0. */
int sw_sampler_is_ours(const sw_sampler_t *self, pid_t pid);
/* Number of online cores seen in /proc/stat. */
int sw_sampler_cores(const sw_sampler_t *self);

/* The pre-run quiet wait, judged by the same sustained-evidence rules as contamination
 * (docs/gate-rules.md): the last settle_ms of samples must have a mean cpu_other at most
 * cpu_other_mean_max, at most over_max_ms above cpu_other_max, no foreign GPU user, and (when
 * load1_max > 0) a load1 at most load1_max. The wait gives up after max_wait_ms (the run then
 * starts, and its pre-run window shows why). */
struct sw_quiet_rules {
  double load1_max; /* 0: not checked */
  double cpu_other_max, cpu_other_mean_max;
  int64_t over_max_ms, settle_ms, max_wait_ms;
  int gpu_foreign; /* 1: a foreign GPU user keeps the machine "not quiet" */
};
#define SW_QUIET_RING 1024
struct sw_quiet {
  struct sw_quiet_rules r;
  int64_t started_ms; /* when the wait began */
  struct {
    int64_t t_ms;
    double cpu_other, load1;
    int gpu_users;
  } ring[SW_QUIET_RING];
  int head, n;
};
enum sw_quiet_state { SW_QUIET_WAIT = 0, SW_QUIET_READY = 1, SW_QUIET_GAVE_UP = 2 };
void sw_quiet_begin(struct sw_quiet *q, const struct sw_quiet_rules *rules, int64_t now_ms);
/* Feeds one sample; returns an sw_quiet_state. */
int sw_quiet_feed(struct sw_quiet *q, const struct sw_load_sample *s);

#endif

/* sw_sampler.c: /proc readers for the load sampler and the quiet-wait state machine. */
#ifdef __APPLE__
/* The build defines _POSIX_C_SOURCE, which hides getloadavg, sysctlbyname and friends. */
#define _DARWIN_C_SOURCE 1
#endif
#include "sw_sampler.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __APPLE__
#include <libproc.h>
#include <mach/mach.h>
#include <mach/mach_time.h>
#endif

struct sw_sampler {
  char root[256];
  int cores;
  int have_prev;
  unsigned long long prev_busy, prev_total, prev_trainer;
  pid_t prev_pgid;
};

int sw_sampler_new(const char *proc_root, sw_sampler_t **out, struct sw_err *err) {
  *out = NULL;
  sw_sampler_t *s = calloc(1, sizeof *s);
  if (!s)
    return sw_err_set(err, SW_ENOMEM, "sampler: out of memory");
  snprintf(s->root, sizeof s->root, "%s", proc_root ? proc_root : "/proc");
  *out = s;
  return 0;
}

void sw_sampler_destroy(sw_sampler_t **self_p) {
  if (!self_p || !*self_p)
    return;
  free(*self_p);
  *self_p = NULL;
}

int sw_sampler_cores(const sw_sampler_t *self) { return self->cores; }

/* Reads the aggregate "cpu" line of /proc/stat into busy and total jiffies and counts cores. */
static int read_stat(sw_sampler_t *s, unsigned long long *busy, unsigned long long *total,
                     struct sw_err *err) {
  char path[300];
  snprintf(path, sizeof path, "%s/stat", s->root);
  FILE *f = fopen(path, "r");
  if (!f)
    return sw_err_set(err, SW_EIO, "sampler: cannot open %s", path);
  char line[1024];
  int found = 0, cores = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "cpu ", 4)) {
      unsigned long long v[8] = {0};
      int n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                     &v[3], &v[4], &v[5], &v[6], &v[7]);
      if (n >= 4) {
        /* user nice system idle iowait irq softirq steal */
        *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        *total = *busy + v[3] + v[4];
        found = 1;
      }
    } else if (!strncmp(line, "cpu", 3) && isdigit((unsigned char)line[3])) {
      cores++;
    }
  }
  fclose(f);
  if (!found)
    return sw_err_set(err, SW_EIO, "sampler: %s has no aggregate cpu line", path);
  s->cores = cores > 0 ? cores : 1;
  return 0;
}

/* Sums utime+stime+cutime+cstime of every process whose process group is pgid. */
static unsigned long long group_jiffies(const sw_sampler_t *s, pid_t pgid) {
  if (pgid <= 0)
    return 0;
  DIR *d = opendir(s->root);
  if (!d)
    return 0;
  unsigned long long sum = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!isdigit((unsigned char)e->d_name[0]))
      continue;
    char path[600], buf[1024];
    snprintf(path, sizeof path, "%s/%s/stat", s->root, e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue; /* the process may have exited in between */
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may contain spaces and parentheses; fields resume after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
      continue;
    long pgrp = 0;
    unsigned long long ut = 0, st = 0;
    long long cut = 0, cst = 0;
    /* Fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
     * stime cutime cstime. */
    if (sscanf(p + 1, " %*c %*d %ld %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &pgrp,
               &ut, &st, &cut, &cst) != 5)
      continue;
    if (pgrp == (long)pgid)
      sum += ut + st + (unsigned long long)(cut > 0 ? cut : 0) +
             (unsigned long long)(cst > 0 ? cst : 0);
  }
  closedir(d);
  return sum;
}

static double read_loadavg(const sw_sampler_t *s) {
  char path[300];
  snprintf(path, sizeof path, "%s/loadavg", s->root);
  FILE *f = fopen(path, "r");
  double l = -1;
  if (f) {
    if (fscanf(f, "%lf", &l) != 1)
      l = -1;
    fclose(f);
  }
  return l;
}

static double read_memavail(const sw_sampler_t *s) {
  char path[300], line[256];
  snprintf(path, sizeof path, "%s/meminfo", s->root);
  FILE *f = fopen(path, "r");
  double v = 0;
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long kb;
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
      v = (double)kb * 1024.0;
      break;
    }
  }
  fclose(f);
  return v;
}

#ifdef __APPLE__
/* macOS has no /proc: the same three numbers from Mach and libproc. Host CPU ticks are summed
 * over all cores in units of CLK_TCK, like /proc/stat; the trainer group's CPU time comes in
 * Mach time units (nanoseconds on Intel, not on Apple Silicon), converted through the timebase
 * and then to CLK_TCK ticks so the computation below is shared. Written for the lab's Macs; it
 * is not compiled on the Linux machines this project is tested on. */
static int mach_sample(sw_sampler_t *s, pid_t pgid, unsigned long long *busy,
                       unsigned long long *total, unsigned long long *trainer, double *load1,
                       struct sw_err *err) {
  host_cpu_load_info_data_t info;
  mach_msg_type_number_t count = HOST_CPU_LOAD_INFO_COUNT;
  if (host_statistics(mach_host_self(), HOST_CPU_LOAD_INFO, (host_info_t)&info, &count) !=
      KERN_SUCCESS)
    return sw_err_set(err, SW_EIO, "sampler: host_statistics(HOST_CPU_LOAD_INFO) failed");
  *busy = (unsigned long long)info.cpu_ticks[CPU_STATE_USER] + info.cpu_ticks[CPU_STATE_SYSTEM] +
          info.cpu_ticks[CPU_STATE_NICE];
  *total = *busy + info.cpu_ticks[CPU_STATE_IDLE];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  s->cores = cores > 0 ? (int)cores : 1;
  double la[1];
  if (getloadavg(la, 1) != 1)
    return sw_err_set(err, SW_EIO, "sampler: getloadavg failed");
  *load1 = la[0];
  *trainer = 0;
  if (pgid > 0) {
    pid_t pids[1024];
    int bytes = proc_listpids(PROC_PGRP_ONLY, (uint32_t)pgid, pids, (int)sizeof pids);
    mach_timebase_info_data_t tb;
    mach_timebase_info(&tb);
    double ns = 0;
    for (int i = 0; bytes > 0 && i < bytes / (int)sizeof(pid_t); i++) {
      struct proc_taskinfo ti;
      if (pids[i] > 0 && proc_pidinfo(pids[i], PROC_PIDTASKINFO, 0, &ti, sizeof ti) == sizeof ti)
        ns += (double)(ti.pti_total_user + ti.pti_total_system) * tb.numer / tb.denom;
    }
    long hz = sysconf(_SC_CLK_TCK);
    *trainer = (unsigned long long)(ns * (double)(hz > 0 ? hz : 100) / 1e9);
  }
  return 0;
}
#endif

int sw_sampler_sample(sw_sampler_t *self, pid_t trainer_pgid, int64_t now_ms,
                      struct sw_load_sample *out, struct sw_err *err) {
  memset(out, 0, sizeof *out);
  out->t_ms = now_ms;
  unsigned long long busy = 0, total = 0, trainer = 0;
  int rc;
#ifdef __APPLE__
  if (!strcmp(self->root, "/proc")) {
    rc = mach_sample(self, trainer_pgid, &busy, &total, &trainer, &out->load1, err);
    if (rc)
      return rc;
  } else
#endif
  {
    rc = read_stat(self, &busy, &total, err);
    if (rc)
      return rc;
    double l = read_loadavg(self);
    if (l < 0)
      return sw_err_set(err, SW_EIO, "sampler: cannot read %s/loadavg", self->root);
    out->load1 = l;
    out->mem_avail = read_memavail(self);
    trainer = group_jiffies(self, trainer_pgid);
  }
  if (self->have_prev && total > self->prev_total) {
    double per_core = (double)(total - self->prev_total) / (double)self->cores;
    double busy_d = busy >= self->prev_busy ? (double)(busy - self->prev_busy) : 0.0;
    /* A trainer group that changed, or whose processes were reaped, has no valid delta: its
     * whole interval is then charged to "other", which errs on the side of contamination only
     * for one sample at a run's start. The group leader's cutime keeps reaped children. */
    double tr_d = 0;
    if (trainer_pgid > 0 && trainer_pgid == self->prev_pgid && trainer >= self->prev_trainer)
      tr_d = (double)(trainer - self->prev_trainer);
    out->cpu_total = busy_d / per_core;
    out->cpu_other = (busy_d - tr_d) / per_core;
    if (out->cpu_other < 0)
      out->cpu_other = 0;
  }
  self->prev_busy = busy;
  self->prev_total = total;
  self->prev_trainer = trainer;
  self->prev_pgid = trainer_pgid;
  self->have_prev = 1;
  return 0;
}

void sw_quiet_begin(struct sw_quiet *q, double load1_max, double cpu_other_max, int64_t settle_ms,
                    int64_t max_wait_ms, int64_t now_ms) {
  q->load1_max = load1_max;
  q->cpu_other_max = cpu_other_max;
  q->settle_ms = settle_ms;
  q->max_wait_ms = max_wait_ms;
  q->started_ms = now_ms;
  q->quiet_since_ms = -1;
}

int sw_quiet_feed(struct sw_quiet *q, const struct sw_load_sample *s) {
  int quiet = s->load1 <= q->load1_max && s->cpu_other <= q->cpu_other_max;
  if (!quiet) {
    q->quiet_since_ms = -1;
  } else if (q->quiet_since_ms < 0) {
    q->quiet_since_ms = s->t_ms;
  }
  if (q->quiet_since_ms >= 0 && s->t_ms - q->quiet_since_ms >= q->settle_ms)
    return SW_QUIET_READY;
  if (s->t_ms - q->started_ms >= q->max_wait_ms)
    return SW_QUIET_GAVE_UP;
  return SW_QUIET_WAIT;
}

/* sw_sampler.c: the load sampler (host and process readers for Linux /proc and macOS, the
 * attribution of busy cores to trainer / self / other, GPU node users) and the quiet wait. */
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
#include <sys/resource.h>
#endif

/* One process as the sampler sees it. Ticks are CLK_TCK units (jiffies on Linux). */
struct proc_row {
  pid_t pid, ppid, pgid;
  double own;      /* utime + stime */
  double child;    /* cutime + cstime: reaped children */
  signed char cls; /* 0 other, 1 trainer, 2 self (filled by classify) */
};

#define MIN_TICKS 10   /* per core: 100 ms at the usual 100 Hz */
#define PROC_MAX 65536 /* processes scanned per sample; the rest count as "other" */

struct sw_sampler {
  char root[256];
  int cores;
  pid_t self_pid, self_root;
  int have_prev;
  double prev_busy, prev_total, prev_trainer, prev_self;
  /* Trainer attribution: pgid while a trainer is attributed, 0 otherwise. */
  pid_t trainer;
  double child_base;     /* the worker's child ticks when the trainer began */
  double child_excluded; /* child ticks that belonged to earlier trainers */
  /* The latest scan, sorted by pid, for sw_sampler_is_ours. */
  struct proc_row *rows;
  int n_rows, cap_rows;
  /* GPU device nodes the trainer holds (or held last): "nvidia0", "renderD128". */
  char gpu_nodes[4][24];
  int n_gpu_nodes;
};

#ifndef __APPLE__
static double read_loadavg(const sw_sampler_t *s) {
  char path[300];
  snprintf(path, sizeof path, "%s/loadavg", s->root);
  FILE *f = fopen(path, "r");
  double l = -1;
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

static double read_memavail(const sw_sampler_t *s) {
  char path[300], line[256];
  snprintf(path, sizeof path, "%s/meminfo", s->root);
  FILE *f = fopen(path, "r");
  double v = 0;
  if (!f) return 0;
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

#endif

int sw_sampler_new(const char *proc_root, pid_t self_pid, pid_t self_root, sw_sampler_t **out,
                   struct sw_err *err) {
  *out = NULL;
  sw_sampler_t *s = calloc(1, sizeof *s);
  if (!s) return sw_err_set(err, SW_ENOMEM, "sampler: out of memory");
  snprintf(s->root, sizeof s->root, "%s", proc_root ? proc_root : "/proc");
  s->self_pid = self_pid > 0 ? self_pid : getpid();
  s->self_root = self_root > 0 ? self_root : s->self_pid;
  *out = s;
  return 0;
}

void sw_sampler_destroy(sw_sampler_t **self_p) {
  if (!self_p || !*self_p) return;
  free((*self_p)->rows);
  free(*self_p);
  *self_p = NULL;
}

int sw_sampler_cores(const sw_sampler_t *self) { return self->cores; }

#ifndef __APPLE__
/* Reads the aggregate "cpu" line of /proc/stat into busy and total jiffies and counts cores. */
static int read_stat(sw_sampler_t *s, double *busy, double *total, struct sw_err *err) {
  char path[300];
  snprintf(path, sizeof path, "%s/stat", s->root);
  FILE *f = fopen(path, "r");
  if (!f) return sw_err_set(err, SW_EIO, "sampler: cannot open %s", path);
  char line[1024];
  int found = 0, cores = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "cpu ", 4)) {
      unsigned long long v[8] = {0};
      int n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                     &v[3], &v[4], &v[5], &v[6], &v[7]);
      if (n >= 4) {
        /* user nice system idle iowait irq softirq steal */
        *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
        *total = *busy + (double)(v[3] + v[4]);
        found = 1;
      }
    } else if (!strncmp(line, "cpu", 3) && isdigit((unsigned char)line[3])) {
      cores++;
    }
  }
  fclose(f);
  if (!found) return sw_err_set(err, SW_EIO, "sampler: %s has no aggregate cpu line", path);
  s->cores = cores > 0 ? cores : 1;
  return 0;
}

#endif

static int add_row(sw_sampler_t *s, const struct proc_row *r) {
  if (s->n_rows == s->cap_rows) {
    if (s->cap_rows >= PROC_MAX) return -1;
    int nc = s->cap_rows ? s->cap_rows * 2 : 256;
    struct proc_row *nr = realloc(s->rows, (size_t)nc * sizeof *nr);
    if (!nr) return -1;
    s->rows = nr;
    s->cap_rows = nc;
  }
  s->rows[s->n_rows++] = *r;
  return 0;
}

#ifndef __APPLE__
/* Every process of /proc: pid, ppid, process group and CPU ticks. A process that exits while
 * it is read is skipped (its time shows up in its parent's child time once reaped). */
static void scan_procs(sw_sampler_t *s) {
  s->n_rows = 0;
  DIR *d = opendir(s->root);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char path[600], buf[1024];
    snprintf(path, sizeof path, "%s/%s/stat", s->root, e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may contain spaces and parentheses; fields resume after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p) continue;
    long ppid = 0, pgrp = 0;
    unsigned long long ut = 0, st = 0;
    long long cut = 0, cst = 0;
    /* Fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
     * stime cutime cstime. */
    if (sscanf(p + 1, " %*c %ld %ld %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &ppid,
               &pgrp, &ut, &st, &cut, &cst) != 6)
      continue;
    struct proc_row r = {.pid = (pid_t)atol(e->d_name),
                         .ppid = (pid_t)ppid,
                         .pgid = (pid_t)pgrp,
                         .own = (double)(ut + st),
                         .child = (double)((cut > 0 ? cut : 0) + (cst > 0 ? cst : 0))};
    if (add_row(s, &r)) break;
  }
  closedir(d);
}

static int read_host(sw_sampler_t *s, double *busy, double *total, double *load1, double *mem,
                     struct sw_err *err) {
  int rc = read_stat(s, busy, total, err);
  if (rc) return rc;
  *load1 = read_loadavg(s);
  if (*load1 < 0) return sw_err_set(err, SW_EIO, "sampler: cannot read %s/loadavg", s->root);
  *mem = read_memavail(s);
  return 0;
}
#endif

#ifdef __APPLE__
/* macOS has no /proc: host CPU ticks from Mach (summed over all cores, in CLK_TCK units like
 * /proc/stat), processes from libproc (ppid, process group, task times in Mach time units,
 * converted through the timebase), and this worker's reaped children from getrusage. Written
 * for the lab's Macs; it is not compiled on the Linux machines this project is tested on. */
static int read_host(sw_sampler_t *s, double *busy, double *total, double *load1, double *mem,
                     struct sw_err *err) {
  host_cpu_load_info_data_t info;
  mach_msg_type_number_t count = HOST_CPU_LOAD_INFO_COUNT;
  if (host_statistics(mach_host_self(), HOST_CPU_LOAD_INFO, (host_info_t)&info, &count) !=
      KERN_SUCCESS)
    return sw_err_set(err, SW_EIO, "sampler: host_statistics(HOST_CPU_LOAD_INFO) failed");
  *busy = (double)info.cpu_ticks[CPU_STATE_USER] + (double)info.cpu_ticks[CPU_STATE_SYSTEM] +
          (double)info.cpu_ticks[CPU_STATE_NICE];
  *total = *busy + (double)info.cpu_ticks[CPU_STATE_IDLE];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  s->cores = cores > 0 ? (int)cores : 1;
  double la[1];
  if (getloadavg(la, 1) != 1) return sw_err_set(err, SW_EIO, "sampler: getloadavg failed");
  *load1 = la[0];
  *mem = 0;
  return 0;
}

static void scan_procs(sw_sampler_t *s) {
  s->n_rows = 0;
  static pid_t pids[PROC_MAX];
  int n = proc_listallpids(pids, (int)sizeof pids);
  mach_timebase_info_data_t tb;
  mach_timebase_info(&tb);
  long hz = sysconf(_SC_CLK_TCK);
  double per_tick = 1e9 / (double)(hz > 0 ? hz : 100);
  for (int i = 0; i < n && i < PROC_MAX; i++) {
    if (pids[i] <= 0) continue;
    struct proc_bsdinfo bi;
    struct proc_taskinfo ti;
    if (proc_pidinfo(pids[i], PROC_PIDTBSDINFO, 0, &bi, sizeof bi) != (int)sizeof bi) continue;
    struct proc_row r = {.pid = pids[i], .ppid = (pid_t)bi.pbi_ppid, .pgid = (pid_t)bi.pbi_pgid};
    if (proc_pidinfo(pids[i], PROC_PIDTASKINFO, 0, &ti, sizeof ti) == (int)sizeof ti)
      r.own = (double)(ti.pti_total_user + ti.pti_total_system) * tb.numer / tb.denom / per_tick;
    if (pids[i] == s->self_pid) {
      struct rusage ru;
      if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
        r.child = ((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                   (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6) *
                  (double)(hz > 0 ? hz : 100);
    }
    if (add_row(s, &r)) break;
  }
}
#endif

static int by_pid(const void *a, const void *b) {
  pid_t x = ((const struct proc_row *)a)->pid, y = ((const struct proc_row *)b)->pid;
  return (x > y) - (x < y);
}

static struct proc_row *find_row(const sw_sampler_t *s, pid_t pid) {
  struct proc_row key = {.pid = pid};
  return s->n_rows ? bsearch(&key, s->rows, (size_t)s->n_rows, sizeof key, by_pid) : NULL;
}

/* 1 when row r is root or descends from it (bounded walk up the ppid chain). */
static int descends(const sw_sampler_t *s, const struct proc_row *r, pid_t root) {
  for (int depth = 0; r && depth < 64; depth++) {
    if (r->pid == root) return 1;
    if (r->ppid <= 1 || r->ppid == r->pid) return 0;
    r = find_row(s, r->ppid);
  }
  return 0;
}

/* Marks every row trainer (1), self (2) or other (0), and sums the trainer's and self's ticks.
 * Self counts own ticks only (a process's child time holds reaped processes that were counted
 * live already), except for this worker, whose child time holds the reaped trainers and
 * preparation children: the trainer's part is attributed to the trainer while it is attributed
 * and excluded for good afterwards; the rest is self. */
static void classify(sw_sampler_t *s, double *trainer, double *self_ticks) {
  qsort(s->rows, (size_t)s->n_rows, sizeof *s->rows, by_pid);
  const struct proc_row *root = find_row(s, s->self_root);
  const struct proc_row *me = find_row(s, s->self_pid);
  pid_t root_pg = root ? root->pgid : -1, my_pg = me ? me->pgid : -1;
  double tr = 0, se = 0, my_child = me ? me->child : 0;
  for (int i = 0; i < s->n_rows; i++) {
    struct proc_row *r = &s->rows[i];
    r->cls = 0;
    if (s->trainer > 0 && (r->pgid == s->trainer || descends(s, r, s->trainer))) {
      r->cls = 1;
      tr += r->own + r->child;
    } else if ((r->pgid == root_pg || r->pgid == my_pg) && descends(s, r, s->self_root)) {
      r->cls = 2;
      se += r->own;
    }
  }
  if (s->trainer > 0) {
    double reaped = my_child - s->child_base;
    tr += reaped > 0 ? reaped : 0;
    se += s->child_base - s->child_excluded;
  } else {
    se += my_child - s->child_excluded;
  }
  *trainer = tr;
  *self_ticks = se;
}

#ifndef __APPLE__
/* Reads the GPU device node an fd link names ("/dev/nvidia0" -> "nvidia0"; "/dev/dri/renderD128"
 * -> "renderD128"); 0 when it is none. nvidiactl, nvidia-uvm and nvidia-modeset are shared by
 * every process using the driver and name no GPU. */
static int gpu_node(const char *link, char *out, size_t cap) {
  if (!strncmp(link, "/dev/nvidia", 11) && isdigit((unsigned char)link[11])) {
    snprintf(out, cap, "%s", link + 5);
    return 1;
  }
  if (!strncmp(link, "/dev/dri/renderD", 16)) {
    snprintf(out, cap, "%s", link + 9);
    return 1;
  }
  return 0;
}

/* Calls fn for every GPU node process pid holds open; returns -1 when its fds are unreadable. */
static int each_gpu_fd(const sw_sampler_t *s, pid_t pid, void (*fn)(void *, const char *),
                       void *ctx) {
  char dir[320];
  snprintf(dir, sizeof dir, "%s/%d/fd", s->root, (int)pid);
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  int seen = 0;
  while ((e = readdir(d)) && seen < 4096) {
    if (e->d_name[0] == '.') continue;
    seen++;
    char path[600], link[256], node[24];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = '\0';
    if (gpu_node(link, node, sizeof node)) fn(ctx, node);
  }
  closedir(d);
  return 0;
}

static void note_trainer_node(void *ctx, const char *node) {
  sw_sampler_t *s = ctx;
  for (int i = 0; i < s->n_gpu_nodes; i++)
    if (!strcmp(s->gpu_nodes[i], node)) return;
  if (s->n_gpu_nodes < 4)
    snprintf(s->gpu_nodes[s->n_gpu_nodes++], sizeof s->gpu_nodes[0], "%s", node);
}

struct foreign_probe {
  const sw_sampler_t *s;
  int hit;
};
static void probe_node(void *ctx, const char *node) {
  struct foreign_probe *p = ctx;
  for (int i = 0; i < p->s->n_gpu_nodes; i++)
    if (!strcmp(p->s->gpu_nodes[i], node)) p->hit = 1;
}

/* Processes that are not ours holding one of the trainer's GPU nodes; -1 when unknown. */
static int gpu_users(sw_sampler_t *s) {
  if (s->trainer > 0) {
    int n_before = s->n_gpu_nodes;
    s->n_gpu_nodes = 0;
    for (int i = 0; i < s->n_rows; i++)
      if (s->rows[i].cls == 1) each_gpu_fd(s, s->rows[i].pid, note_trainer_node, s);
    if (s->n_gpu_nodes == 0 && n_before > 0)
      s->n_gpu_nodes = n_before; /* not opened yet: keep what the previous trainer held */
  }
  if (s->n_gpu_nodes == 0)
    return -1; /* no GPU node known (a CPU device such as lavapipe opens none) */
  int users = 0, unreadable = 0;
  for (int i = 0; i < s->n_rows; i++) {
    if (s->rows[i].cls != 0) continue;
    struct foreign_probe p = {s, 0};
    if (each_gpu_fd(s, s->rows[i].pid, probe_node, &p) < 0) unreadable++;
    users += p.hit;
  }
  return users ? users : (unreadable == s->n_rows ? -1 : 0);
}
#else
static int gpu_users(sw_sampler_t *s) {
  (void)s;
  return -1;
}
#endif

int sw_sampler_is_ours(const sw_sampler_t *self, pid_t pid) {
  const struct proc_row *r = find_row(self, pid);
  return r && r->cls != 0;
}

static int take(sw_sampler_t *self, int64_t now_ms, struct sw_load_sample *out, int full,
                struct sw_err *err) {
  memset(out, 0, sizeof *out);
  out->t_ms = now_ms;
  out->gpu_users = -1;
  double busy = 0, total = 0, trainer = 0, self_ticks = 0;
  int rc = read_host(self, &busy, &total, &out->load1, &out->mem_avail, err);
  if (rc) return rc;
  scan_procs(self);
  classify(self, &trainer, &self_ticks);
  if (full) out->gpu_users = gpu_users(self);
  /* Process and host times tick at 100 Hz: over an interval shorter than MIN_TICKS per core
   * the figures are noise (one tick of a fork reads as a busy core), so such a sample reports
   * load and memory only and its CPU time is carried into the next sample. */
  if (self->have_prev && total - self->prev_total < MIN_TICKS * (double)self->cores) return 0;
  if (self->have_prev && total > self->prev_total) {
    double per_core = (total - self->prev_total) / (double)self->cores;
    double busy_d = busy >= self->prev_busy ? busy - self->prev_busy : 0.0;
    double tr_d = trainer >= self->prev_trainer ? trainer - self->prev_trainer : 0.0;
    double se_d = self_ticks >= self->prev_self ? self_ticks - self->prev_self : 0.0;
    /* Process ticks and /proc/stat are sampled a moment apart: clamp so that the parts never
     * exceed the whole. */
    if (tr_d > busy_d) tr_d = busy_d;
    if (se_d > busy_d - tr_d) se_d = busy_d - tr_d;
    out->cpu_total = busy_d / per_core;
    out->cpu_trainer = tr_d / per_core;
    out->cpu_self = se_d / per_core;
    out->cpu_other = (busy_d - tr_d - se_d) / per_core;
    if (out->cpu_other < 0) out->cpu_other = 0;
  }
  self->prev_busy = busy;
  self->prev_total = total;
  self->prev_trainer = trainer;
  self->prev_self = self_ticks;
  self->have_prev = 1;
  return 0;
}

int sw_sampler_sample(sw_sampler_t *self, int64_t now_ms, struct sw_load_sample *out,
                      struct sw_err *err) {
  return take(self, now_ms, out, 1, err);
}

int sw_sampler_prime(sw_sampler_t *self, int64_t now_ms, struct sw_err *err) {
  struct sw_load_sample x;
  return take(self, now_ms, &x, 0, err);
}

/* The worker's own child ticks now (its reaped children). */
static int my_child_ticks(sw_sampler_t *s, double *out, struct sw_err *err) {
  scan_procs(s);
  qsort(s->rows, (size_t)s->n_rows, sizeof *s->rows, by_pid);
  const struct proc_row *me = find_row(s, s->self_pid);
  if (!me)
    return sw_err_set(err, SW_EIO, "sampler: process %d not found under %s", (int)s->self_pid,
                      s->root);
  *out = me->child;
  return 0;
}

/* Switching the trainer on or off changes who a tick belongs to, not the totals: self's sum is
 * the same under both definitions at the moment of the switch (the worker's child time up to
 * now stays self), so the running interval continues unbroken. The trainer's counter starts at
 * 0 and takes in the ticks the new trainer used since its fork; after the end it is 0 again. */
int sw_sampler_trainer_begin(sw_sampler_t *self, pid_t pgid, struct sw_err *err) {
  double child = 0;
  int rc = my_child_ticks(self, &child, err);
  if (rc) return rc;
  self->trainer = pgid;
  self->child_base = child;
  self->prev_trainer = 0;
  return 0;
}

int sw_sampler_trainer_end(sw_sampler_t *self, struct sw_err *err) {
  if (self->trainer <= 0) return 0;
  double child = 0;
  int rc = my_child_ticks(self, &child, err);
  if (rc) return rc;
  if (child > self->child_base) self->child_excluded += child - self->child_base;
  self->trainer = 0;
  self->prev_trainer = 0;
  return 0;
}

void sw_quiet_begin(struct sw_quiet *q, const struct sw_quiet_rules *rules, int64_t now_ms) {
  memset(q, 0, sizeof *q);
  q->r = *rules;
  q->started_ms = now_ms;
}

int sw_quiet_feed(struct sw_quiet *q, const struct sw_load_sample *s) {
  int slot = (q->head + q->n) % SW_QUIET_RING;
  if (q->n == SW_QUIET_RING) {
    q->head = (q->head + 1) % SW_QUIET_RING;
    q->n--;
    slot = (q->head + q->n) % SW_QUIET_RING;
  }
  q->ring[slot].t_ms = s->t_ms;
  q->ring[slot].cpu_other = s->cpu_other;
  q->ring[slot].load1 = s->load1;
  q->ring[slot].gpu_users = s->gpu_users;
  q->n++;
  /* Drop samples older than the settle window, keeping one at or before its start so that the
   * window's span can be told. */
  while (q->n > 1 && q->ring[(q->head + 1) % SW_QUIET_RING].t_ms <= s->t_ms - q->r.settle_ms) {
    q->head = (q->head + 1) % SW_QUIET_RING;
    q->n--;
  }
  const int oldest = q->head;
  int quiet = s->t_ms - q->ring[oldest].t_ms >= q->r.settle_ms;
  double sum = 0, w = 0;
  int64_t above = 0;
  for (int k = 1; k < q->n; k++) {
    int cur = (q->head + k) % SW_QUIET_RING, prev = (q->head + k - 1) % SW_QUIET_RING;
    int64_t dt = q->ring[cur].t_ms - q->ring[prev].t_ms;
    sum += q->ring[cur].cpu_other * (double)dt;
    w += (double)dt;
    if (q->ring[cur].cpu_other > q->r.cpu_other_max) above += dt;
    if (q->r.gpu_foreign && q->ring[cur].gpu_users > 0) quiet = 0;
  }
  if (w > 0 && sum / w > q->r.cpu_other_mean_max) quiet = 0;
  if (above > q->r.over_max_ms) quiet = 0;
  if (q->r.load1_max > 0 && s->load1 > q->r.load1_max) quiet = 0;
  if (quiet) return SW_QUIET_READY;
  if (s->t_ms - q->started_ms >= q->r.max_wait_ms) return SW_QUIET_GAVE_UP;
  return SW_QUIET_WAIT;
}

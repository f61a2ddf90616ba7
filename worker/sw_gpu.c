/* sw_gpu.c: the GPU sampler over NVML loaded with dlopen (see sw_gpu.h for the rules).
 *
 * The NVML ABI used here, from NVIDIA's NVML API reference (docs.nvidia.com/deploy/nvml-api):
 *  - nvmlReturn_t and the enum parameters (nvmlClockType_t, nvmlTemperatureSensors_t) are C
 *    enums, passed and returned as int. nvmlDevice_t is an opaque pointer.
 *  - Process lists: f(device, unsigned int *infoCount, infos). On entry *infoCount is the room in
 *    infos; NVML_ERROR_INSUFFICIENT_SIZE sets it to the number needed. Each version has its own
 *    entry layout: the unversioned functions take nvmlProcessInfo_v1_t {pid, usedGpuMemory}, the
 *    _v2 ones nvmlProcessInfo_v2_t {pid, usedGpuMemory, gpuInstanceId, computeInstanceId}, and
 *    the _v3 ones nvmlProcessInfo_t, which the current reference documents with the same four
 *    fields as v2. The nvml.h of the R530-era drivers (CUDA 12.1) briefly gave nvmlProcessInfo_t
 *    a fifth field, usedGpuCcProtectedMemory, which later moved to nvmlProcessDetail_v1_t
 *    (nvmlDeviceGetRunningProcessDetailList). A driver of that era writes 32-byte entries, so,
 *    as nvitop does: a library with nvmlDeviceGetConfComputeMemSizeInfo but without
 *    nvmlDeviceGetRunningProcessDetailList is read with the 32-byte stride. The buffer always
 *    has room for the largest layout, so a wrong guess can garble pids but never overrun it.
 *  - The pid is the first field of every layout, so entries are read by stride.
 *
 * No NVML header is included and no NVML type leaves this file. */
#include "sw_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sample in which every figure is unknown. */
static struct sw_gpu_sample unknown_sample(void) {
  return (struct sw_gpu_sample){.device = -1,
                                .util_pct = NAN,
                                .mem_util_pct = NAN,
                                .sm_mhz = NAN,
                                .temp_c = NAN,
                                .power_w = NAN,
                                .throttle = SW_GPU_THROTTLE_UNKNOWN,
                                .n_procs = -1,
                                .n_foreign = -1};
}

#if defined(__linux__)
#include <dlfcn.h>

/* ---- The NVML ABI subset ---------------------------------------------------------------- */

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_MEMORY = 20
};
enum { NVML_CLOCK_SM = 1 };        /* nvmlClockType_t */
enum { NVML_TEMPERATURE_GPU = 0 }; /* nvmlTemperatureSensors_t */
#define NVML_NAME_BUFFER 96        /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_UUID_BUFFER 96        /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;
struct nvml_utilization {
  unsigned int gpu, memory;
};
struct nvml_proc_v1 {
  unsigned int pid;
  unsigned long long used_gpu_memory;
};
struct nvml_proc_v2 { /* also nvmlProcessInfo_t of the _v3 functions */
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};
struct nvml_proc_v3cc { /* nvmlProcessInfo_t of the R530-era header */
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
  unsigned long long used_gpu_cc_protected_memory;
};
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct nvml_proc_v1) == 16, "nvmlProcessInfo_v1_t is 16 bytes");
_Static_assert(sizeof(struct nvml_proc_v2) == 24, "nvmlProcessInfo_v2_t is 24 bytes");
_Static_assert(sizeof(struct nvml_proc_v3cc) == 32, "R530 nvmlProcessInfo_t is 32 bytes");
#endif

typedef nvml_ret (*proc_list_fn)(nvml_device, unsigned int *count, void *infos);

struct proc_api {
  proc_list_fn fn; /* NULL when the library has none of the versions */
  const char *name;
  size_t stride; /* bytes per entry of the version found */
};

struct nvml_api {
  nvml_ret (*init)(void);
  nvml_ret (*shutdown)(void);
  const char *(*error_string)(nvml_ret);
  nvml_ret (*count)(unsigned int *);
  nvml_ret (*handle_by_index)(unsigned int, nvml_device *);
  nvml_ret (*name)(nvml_device, char *, unsigned int);
  nvml_ret (*uuid)(nvml_device, char *, unsigned int);
  nvml_ret (*utilization)(nvml_device, struct nvml_utilization *);
  nvml_ret (*clock)(nvml_device, int, unsigned int *);
  nvml_ret (*temperature)(nvml_device, int, unsigned int *);
  nvml_ret (*power)(nvml_device, unsigned int *);
  nvml_ret (*reasons)(nvml_device, unsigned long long *);
  const char *reasons_name;
  struct proc_api compute, graphics;
};

/* ---- The handle ---------------------------------------------------------------------- */

#define MAX_DEVICES 64
#define LIST_START 16 /* entries of the first process buffer */
#define LIST_CALLS 4  /* calls per list and sample: the first plus at most 3 growths */

struct gpu_dev {
  nvml_device h;
  nvml_ret handle_ret; /* why h is NULL */
  char name[NVML_NAME_BUFFER], uuid[NVML_UUID_BUFFER];
};

/* What one sample learnt from one GPU's process lists. */
struct dev_scan {
  int lists_read;   /* how many of the two lists were read */
  int lists_failed; /* how many NVML refused for a reason other than "not supported" */
  int procs, ours;  /* distinct pids, and how many of them are ours */
  int not_ours;
  int32_t first_not_ours[4];
};

struct sw_gpu {
  void *lib;
  int inited; /* nvmlInit succeeded: nvmlShutdown is owed */
  struct nvml_api api;
  int count, index_env;
  struct gpu_dev *dev;
  struct dev_scan *scan;
  unsigned char *raw; /* process entries as NVML writes them */
  unsigned int raw_cap;
  int32_t *pids; /* one GPU's pids, both lists: 2 * SW_GPU_MAX_PROCS */
};

/* dlsym into a function pointer of any type (POSIX guarantees the representation). */
#define BIND(lib, field, sym)                                                                      \
  do {                                                                                             \
    void *p_ = dlsym((lib), (sym));                                                                \
    _Static_assert(sizeof p_ == sizeof(field), "function pointers are data-pointer sized");        \
    memcpy(&(field), &p_, sizeof p_);                                                              \
  } while (0)

/* The first of names[] the library exports, bound to *fn; returns its index, -1 for none. */
static int bind_first(void *lib, void *fn, size_t fn_size, const char *const *names, int n) {
  for (int i = 0; i < n; i++) {
    void *p = dlsym(lib, names[i]);
    if (p) {
      memcpy(fn, &p, fn_size);
      return i;
    }
  }
  return -1;
}

static const char *const compute_fns[3] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                           "nvmlDeviceGetComputeRunningProcesses_v2",
                                           "nvmlDeviceGetComputeRunningProcesses"};
static const char *const graphics_fns[3] = {"nvmlDeviceGetGraphicsRunningProcesses_v3",
                                            "nvmlDeviceGetGraphicsRunningProcesses_v2",
                                            "nvmlDeviceGetGraphicsRunningProcesses"};

/* Binds the newest version of one process-list function and the entry layout it writes. */
static void bind_procs(void *lib, struct proc_api *pa, const char *const names[3]) {
  int v = bind_first(lib, &pa->fn, sizeof pa->fn, names, 3);
  pa->name = names[v < 0 ? 0 : v];
  if (v == 0) {
    int r530 = dlsym(lib, "nvmlDeviceGetConfComputeMemSizeInfo") != NULL &&
               dlsym(lib, "nvmlDeviceGetRunningProcessDetailList") == NULL;
    pa->stride = r530 ? sizeof(struct nvml_proc_v3cc) : sizeof(struct nvml_proc_v2);
  } else if (v == 1) {
    pa->stride = sizeof(struct nvml_proc_v2);
  } else {
    pa->stride = sizeof(struct nvml_proc_v1);
  }
}

/* Binds every entry point; returns 0 when a core one (init, shutdown, count, handle) is missing,
 * which means the library is not a usable NVML. */
static int bind_api(void *lib, struct nvml_api *a) {
  static const char *const init[] = {"nvmlInit_v2", "nvmlInit"};
  static const char *const count[] = {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"};
  static const char *const handle[] = {"nvmlDeviceGetHandleByIndex_v2",
                                       "nvmlDeviceGetHandleByIndex"};
  static const char *const reasons[] = {"nvmlDeviceGetCurrentClocksEventReasons",
                                        "nvmlDeviceGetCurrentClocksThrottleReasons"};
  if (bind_first(lib, &a->init, sizeof a->init, init, 2) < 0 ||
      bind_first(lib, &a->count, sizeof a->count, count, 2) < 0 ||
      bind_first(lib, &a->handle_by_index, sizeof a->handle_by_index, handle, 2) < 0)
    return 0;
  BIND(lib, a->shutdown, "nvmlShutdown");
  if (!a->shutdown) return 0;
  BIND(lib, a->error_string, "nvmlErrorString");
  BIND(lib, a->name, "nvmlDeviceGetName");
  BIND(lib, a->uuid, "nvmlDeviceGetUUID");
  BIND(lib, a->utilization, "nvmlDeviceGetUtilizationRates");
  BIND(lib, a->clock, "nvmlDeviceGetClockInfo");
  BIND(lib, a->temperature, "nvmlDeviceGetTemperature");
  BIND(lib, a->power, "nvmlDeviceGetPowerUsage");
  int r = bind_first(lib, &a->reasons, sizeof a->reasons, reasons, 2);
  a->reasons_name = r >= 0 ? reasons[r] : reasons[0];
  bind_procs(lib, &a->compute, compute_fns);
  bind_procs(lib, &a->graphics, graphics_fns);
  return 1;
}

static const char *nvml_str(const sw_gpu_t *g, nvml_ret r, char *buf, size_t n) {
  const char *s = g->api.error_string ? g->api.error_string(r) : NULL;
  if (s && *s)
    snprintf(buf, n, "%s (NVML %d)", s, r);
  else
    snprintf(buf, n, "NVML error %d", r);
  return buf;
}

/* Records why a figure is missing, unless NVML merely does not support it there. Returns 1 when
 * something was recorded (a real failure). */
static int note(const sw_gpu_t *g, struct sw_err *err, int dev, const char *fn, nvml_ret r) {
  if (r == NVML_SUCCESS || r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND)
    return 0;
  char b[128];
  if (r == NVML_ERROR_INSUFFICIENT_SIZE)
    sw_err_set(err, SW_EDEVICE, "nvml: GPU %d: %s: list longer than %d entries or still growing",
               dev, fn, SW_GPU_MAX_PROCS);
  else if (r == NVML_ERROR_MEMORY)
    sw_err_set(err, SW_EDEVICE, "nvml: GPU %d: %s: out of memory for the process list", dev, fn);
  else
    sw_err_set(err, SW_EDEVICE, "nvml: GPU %d: %s: %s", dev, fn, nvml_str(g, r, b, sizeof b));
  return 1;
}

static void destroy(sw_gpu_t *g) {
  if (!g) return;
  if (g->inited) g->api.shutdown();
  if (g->lib) dlclose(g->lib);
  free(g->dev);
  free(g->scan);
  free(g->raw);
  free(g->pids);
  free(g);
}

/* Parses env SW_GPU_INDEX into g->index_env (0 when unset). */
static int read_index_env(sw_gpu_t *g, struct sw_err *err) {
  const char *s = getenv("SW_GPU_INDEX");
  g->index_env = 0;
  if (!s || !*s) return 0;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v >= g->count)
    return sw_err_set(err, SW_EINVAL, "SW_GPU_INDEX=%s is not the index of a GPU (NVML sees %d)", s,
                      g->count);
  g->index_env = (int)v;
  return 0;
}

int sw_gpu_open(sw_gpu_t **out, struct sw_err *err) {
  *out = NULL;
  const char *on = getenv("SW_NVML");
  if (on && strcmp(on, "0") == 0) return 0;
  const char *path = getenv("SW_NVML_LIB");
  if (!path || !*path) path = "libnvidia-ml.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 0; /* no NVIDIA driver: the common case, not an error */
  sw_gpu_t *g = calloc(1, sizeof *g);
  if (!g) {
    dlclose(lib);
    return sw_err_set(err, SW_ENOMEM, "nvml: out of memory");
  }
  g->lib = lib;
  if (!bind_api(lib, &g->api) || g->api.init() != NVML_SUCCESS) {
    destroy(g);
    return 0;
  }
  g->inited = 1;
  unsigned int n = 0;
  if (g->api.count(&n) != NVML_SUCCESS || n == 0) {
    destroy(g);
    return 0;
  }
  g->count = n > MAX_DEVICES ? MAX_DEVICES : (int)n;
  g->dev = calloc((size_t)g->count, sizeof *g->dev);
  g->scan = calloc((size_t)g->count, sizeof *g->scan);
  g->raw_cap = LIST_START;
  g->raw = malloc(g->raw_cap * sizeof(struct nvml_proc_v3cc));
  g->pids = malloc(2 * SW_GPU_MAX_PROCS * sizeof *g->pids);
  if (!g->dev || !g->scan || !g->raw || !g->pids) {
    destroy(g);
    return sw_err_set(err, SW_ENOMEM, "nvml: out of memory");
  }
  for (int i = 0; i < g->count; i++) {
    struct gpu_dev *d = &g->dev[i];
    d->handle_ret = g->api.handle_by_index((unsigned int)i, &d->h);
    if (d->handle_ret != NVML_SUCCESS) {
      d->h = NULL;
      continue;
    }
    if (g->api.name && g->api.name(d->h, d->name, sizeof d->name) != NVML_SUCCESS)
      d->name[0] = '\0';
    if (g->api.uuid && g->api.uuid(d->h, d->uuid, sizeof d->uuid) != NVML_SUCCESS)
      d->uuid[0] = '\0';
    d->name[sizeof d->name - 1] = d->uuid[sizeof d->uuid - 1] = '\0';
  }
  int rc = read_index_env(g, err);
  if (rc < 0) {
    destroy(g);
    return rc;
  }
  *out = g;
  return 0;
}

void sw_gpu_close(sw_gpu_t **self_p) {
  if (!self_p || !*self_p) return;
  destroy(*self_p);
  *self_p = NULL;
}

int sw_gpu_count(const sw_gpu_t *self) { return self ? self->count : 0; }

const char *sw_gpu_name(const sw_gpu_t *self, int i) {
  return self && i >= 0 && i < self->count ? self->dev[i].name : NULL;
}

const char *sw_gpu_uuid(const sw_gpu_t *self, int i) {
  return self && i >= 0 && i < self->count ? self->dev[i].uuid : NULL;
}

/* ---- Sampling ------------------------------------------------------------------------ */

/* Appends one process list of h to g->pids[*n]. The buffer grows to what NVML asks for (plus
 * room for processes that start meanwhile), at most LIST_CALLS calls and SW_GPU_MAX_PROCS
 * entries. Returns an NVML code (NVML_ERROR_MEMORY when the buffer could not grow). */
static nvml_ret read_list(sw_gpu_t *g, const struct proc_api *pa, nvml_device h, int *n) {
  if (!pa->fn) return NVML_ERROR_FUNCTION_NOT_FOUND;
  for (int call = 0; call < LIST_CALLS; call++) {
    unsigned int count = g->raw_cap;
    nvml_ret r = pa->fn(h, &count, g->raw);
    if (r == NVML_SUCCESS) {
      if (count > g->raw_cap) count = g->raw_cap;
      for (unsigned int i = 0; i < count; i++) {
        unsigned int pid;
        memcpy(&pid, g->raw + (size_t)i * pa->stride, sizeof pid);
        g->pids[(*n)++] = (int32_t)pid;
      }
      return NVML_SUCCESS;
    }
    if (r != NVML_ERROR_INSUFFICIENT_SIZE || g->raw_cap >= SW_GPU_MAX_PROCS) return r;
    /* What NVML asked for plus room for processes that start meanwhile, without overflow. */
    unsigned int want = count >= SW_GPU_MAX_PROCS ? SW_GPU_MAX_PROCS
                        : count > g->raw_cap      ? count + count / 4 + 8
                                                  : g->raw_cap * 2;
    if (want > SW_GPU_MAX_PROCS) want = SW_GPU_MAX_PROCS;
    unsigned char *raw = realloc(g->raw, want * sizeof(struct nvml_proc_v3cc));
    if (!raw) return NVML_ERROR_MEMORY;
    g->raw = raw;
    g->raw_cap = want;
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

static int cmp_pid(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Reads both process lists of GPU i and sorts its distinct pids into ours and not ours. */
static void scan_device(sw_gpu_t *g, int i, int (*is_ours)(void *, int32_t), void *ctx,
                        struct sw_err *err) {
  struct dev_scan *s = &g->scan[i];
  memset(s, 0, sizeof *s);
  if (!g->dev[i].h) return;
  int n = 0;
  const struct proc_api *lists[2] = {&g->api.compute, &g->api.graphics};
  for (int l = 0; l < 2; l++) {
    nvml_ret r = read_list(g, lists[l], g->dev[i].h, &n);
    if (r == NVML_SUCCESS)
      s->lists_read++;
    else
      s->lists_failed += note(g, err, i, lists[l]->name, r);
  }
  qsort(g->pids, (size_t)n, sizeof *g->pids, cmp_pid);
  for (int k = 0; k < n; k++) {
    if (k > 0 && g->pids[k] == g->pids[k - 1]) continue; /* in both lists */
    s->procs++;
    if (is_ours && is_ours(ctx, g->pids[k])) {
      s->ours++;
    } else {
      if (s->not_ours < 4) s->first_not_ours[s->not_ours] = g->pids[k];
      s->not_ours++;
    }
  }
}

/* The rule of sw_gpu.h: the first GPU listing a pid of ours, else GPU 0 on a one-GPU machine,
 * else SW_GPU_INDEX (0 when unset). */
static int choose_device(const sw_gpu_t *g, int *any_ours) {
  for (int i = 0; i < g->count; i++)
    if (g->scan[i].ours > 0) {
      *any_ours = 1;
      return i;
    }
  *any_ours = 0;
  return g->count == 1 ? 0 : g->index_env;
}

/* Fills n_procs, n_foreign and foreign_pid from the chosen GPU's scan (rules 1-4 of sw_gpu.h). */
static void attribute(const struct dev_scan *s, int trainer, int any_ours,
                      struct sw_gpu_sample *out) {
  if (s->lists_read == 0) return; /* both stay -1 */
  int complete = s->lists_failed == 0;
  out->n_procs = complete ? s->procs : -1;
  if (trainer && !any_ours && s->procs > 0)
    return; /* pids we cannot match: another pid namespace, or a trainer not on the GPU yet */
  if (!complete && s->not_ours == 0) return; /* the refused list may hold the foreign process */
  out->n_foreign = s->not_ours;
  for (int k = 0; k < 4 && k < s->not_ours; k++) out->foreign_pid[k] = s->first_not_ours[k];
}

/* Reads the chosen GPU's figures; returns how many could be read, *failed how many NVML refused
 * for a reason other than "not supported". */
static int read_figures(const sw_gpu_t *g, int i, struct sw_gpu_sample *out, struct sw_err *err,
                        int *failed) {
  const struct nvml_api *a = &g->api;
  nvml_device h = g->dev[i].h;
  int got = 0;
  nvml_ret r;
  *failed = 0;
  if (a->utilization) {
    struct nvml_utilization u = {0, 0};
    if ((r = a->utilization(h, &u)) == NVML_SUCCESS) {
      out->util_pct = u.gpu;
      out->mem_util_pct = u.memory;
      got++;
    }
    *failed += note(g, err, i, "nvmlDeviceGetUtilizationRates", r);
  }
  unsigned int v = 0;
  if (a->clock) {
    if ((r = a->clock(h, NVML_CLOCK_SM, &v)) == NVML_SUCCESS) {
      out->sm_mhz = v;
      got++;
    }
    *failed += note(g, err, i, "nvmlDeviceGetClockInfo(SM)", r);
  }
  if (a->temperature) {
    if ((r = a->temperature(h, NVML_TEMPERATURE_GPU, &v)) == NVML_SUCCESS) {
      out->temp_c = v;
      got++;
    }
    *failed += note(g, err, i, "nvmlDeviceGetTemperature(GPU)", r);
  }
  if (a->power) {
    if ((r = a->power(h, &v)) == NVML_SUCCESS) {
      out->power_w = v / 1000.0;
      got++;
    }
    *failed += note(g, err, i, "nvmlDeviceGetPowerUsage", r);
  }
  if (a->reasons) {
    unsigned long long bits = 0;
    if ((r = a->reasons(h, &bits)) == NVML_SUCCESS) {
      out->throttle = bits;
      got++;
    }
    *failed += note(g, err, i, a->reasons_name, r);
  }
  return got;
}

int sw_gpu_sample(sw_gpu_t *self, int (*is_ours)(void *ctx, int32_t pid), void *ctx,
                  struct sw_gpu_sample *out, struct sw_err *err) {
  *out = unknown_sample();
  if (!self) return sw_err_set(err, SW_ENOTFOUND, "nvml: no NVIDIA GPU sampler on this machine");
  for (int i = 0; i < self->count; i++) scan_device(self, i, is_ours, ctx, err);
  int any_ours = 0;
  int i = choose_device(self, &any_ours);
  out->device = i;
  const struct gpu_dev *d = &self->dev[i];
  if (!d->h) {
    char b[128];
    return sw_err_set(err, SW_EDEVICE, "nvml: GPU %d: nvmlDeviceGetHandleByIndex: %s", i,
                      nvml_str(self, d->handle_ret, b, sizeof b));
  }
  attribute(&self->scan[i], is_ours != NULL, any_ours, out);
  int failed = 0;
  int got = read_figures(self, i, out, err, &failed);
  if (got == 0 && self->scan[i].lists_read == 0 && failed + self->scan[i].lists_failed > 0)
    return SW_EDEVICE; /* err holds the first refusal */
  return 0;
}

#else /* !__linux__: NVML exists only on Linux (and Windows, which splatsweep does not target). */

int sw_gpu_open(sw_gpu_t **out, struct sw_err *err) {
  (void)err;
  *out = NULL;
  return 0;
}

void sw_gpu_close(sw_gpu_t **self_p) {
  if (self_p) *self_p = NULL;
}

int sw_gpu_count(const sw_gpu_t *self) {
  (void)self;
  return 0;
}

const char *sw_gpu_name(const sw_gpu_t *self, int i) {
  (void)self;
  (void)i;
  return NULL;
}

const char *sw_gpu_uuid(const sw_gpu_t *self, int i) {
  (void)self;
  (void)i;
  return NULL;
}

int sw_gpu_sample(sw_gpu_t *self, int (*is_ours)(void *ctx, int32_t pid), void *ctx,
                  struct sw_gpu_sample *out, struct sw_err *err) {
  (void)self;
  (void)is_ours;
  (void)ctx;
  *out = unknown_sample();
  return sw_err_set(err, SW_ENOTFOUND, "nvml: no NVIDIA GPU sampler on this platform");
}

#endif

/* fake_nvml.c: a stand-in for libnvidia-ml that the GPU sampler's tests load through
 * SW_NVML_LIB. It exports the NVML entry points worker/sw_gpu.c uses, with NVML's ABI, and
 * answers from environment variables read at call time:
 *   FAKE_NVML_DEVICES   number of GPUs (default 1)
 *   FAKE_NVML_PROCS     "dev:pid[:kind],...": kind c (compute, the default), g (graphics) or cg
 *                       (both lists); "dev:pid*N" adds N processes pid, pid+1, ... (compute)
 *   FAKE_NVML_UTIL      GPU utilisation percent (default 50); memory utilisation is UTIL / 2
 *   FAKE_NVML_TEMP      temperature of GPU 0 in C (default 60); GPU i reports TEMP + i
 *   FAKE_NVML_FAIL_INIT=1  nvmlInit fails (NVML_ERROR_DRIVER_NOT_LOADED)
 *   FAKE_NVML_FAIL      comma list of util,clock,temp,power,reasons,procs: those calls fail
 *                       with NVML_ERROR_NO_PERMISSION; "all" fails them all with
 *                       NVML_ERROR_GPU_IS_LOST
 *   FAKE_NVML_LOG       a file that gets a line "init" / "shutdown" per call
 * Fixed figures: SM clock 1410 + 10 * i MHz, power 123456 mW, clock event reasons 0x4.
 *
 * Built three ways (tests/gpu_sampler.cmake), one per process-list ABI the sampler must read:
 *   fake_nvml     the _v3 functions, nvmlProcessInfo_t as documented now (24-byte entries),
 *                 nvmlInit_v2 and friends, nvmlDeviceGetCurrentClocksEventReasons;
 *   fake_nvml_cc  the _v3 functions with the R530-era 32-byte nvmlProcessInfo_t
 *                 (usedGpuCcProtectedMemory), marked as NVML of that era is by exporting
 *                 nvmlDeviceGetConfComputeMemSizeInfo without
 * nvmlDeviceGetRunningProcessDetailList; fake_nvml_v1  (-DFAKE_V1) only the unversioned functions
 * of old drivers: nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex, the 16-byte
 *                 nvmlProcessInfo_v1_t lists and nvmlDeviceGetCurrentClocksThrottleReasons. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_GPU_IS_LOST = 15
};

#define MAX_DEV 8
#define MAX_PROCS 4096

/* A device handle points at its index. */
static int dev_index[MAX_DEV] = {0, 1, 2, 3, 4, 5, 6, 7};
typedef int *nvmlDevice_t;
static int initialised; /* nvmlInit / nvmlShutdown reference count, as NVML keeps one */

#if defined(FAKE_V1)
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} proc_info;
#elif defined(FAKE_CC)
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} proc_info;
#else
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} proc_info;
#endif

static int env_int(const char *name, int dflt) {
  const char *s = getenv(name);
  return s && *s ? atoi(s) : dflt;
}

static void log_call(const char *what) {
  const char *path = getenv("FAKE_NVML_LOG");
  if (!path || !*path) return;
  FILE *f = fopen(path, "a");
  if (f) {
    fprintf(f, "%s\n", what);
    fclose(f);
  }
}

/* NVML_SUCCESS, or the failure FAKE_NVML_FAIL asks of the call named what. */
static nvmlReturn_t injected(const char *what) {
  const char *s = getenv("FAKE_NVML_FAIL");
  if (!s || !*s) return NVML_SUCCESS;
  if (strcmp(s, "all") == 0) return NVML_ERROR_GPU_IS_LOST;
  size_t n = strlen(what);
  for (const char *p = s; (p = strstr(p, what)) != NULL; p += n)
    if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return NVML_ERROR_NO_PERMISSION;
  return NVML_SUCCESS;
}

static int device_count(void) {
  int n = env_int("FAKE_NVML_DEVICES", 1);
  return n < 0 ? 0 : n > MAX_DEV ? MAX_DEV : n;
}

static nvmlReturn_t check(nvmlDevice_t d) {
  if (!initialised) return NVML_ERROR_UNINITIALIZED;
  if (!d || d < dev_index || d >= dev_index + device_count()) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

static nvmlReturn_t do_init(void) {
  log_call("init");
  if (env_int("FAKE_NVML_FAIL_INIT", 0)) return NVML_ERROR_DRIVER_NOT_LOADED;
  initialised++;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
  log_call("shutdown");
  if (!initialised) return NVML_ERROR_UNINITIALIZED;
  initialised--;
  return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
  case NVML_SUCCESS: return "Success";
  case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
  case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
  case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
  case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
  case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
  case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
  default: return "Unknown Error";
  }
}

static nvmlReturn_t do_count(unsigned int *n) {
  if (!initialised) return NVML_ERROR_UNINITIALIZED;
  *n = (unsigned int)device_count();
  return NVML_SUCCESS;
}

static nvmlReturn_t do_handle(unsigned int i, nvmlDevice_t *d) {
  if (!initialised) return NVML_ERROR_UNINITIALIZED;
  if (i >= (unsigned int)device_count()) return NVML_ERROR_INVALID_ARGUMENT;
  *d = &dev_index[i];
  return NVML_SUCCESS;
}

#if defined(FAKE_V1)
EXPORT nvmlReturn_t nvmlInit(void) { return do_init(); }
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return do_count(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) {
  return do_handle(i, d);
}
#else
EXPORT nvmlReturn_t nvmlInit_v2(void) { return do_init(); }
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { return do_count(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
  return do_handle(i, d);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS) snprintf(name, len, "Fake GPU %d", *d);
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS) snprintf(uuid, len, "GPU-fake-%04d", *d);
  return r;
}

typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && (r = injected("util")) == NVML_SUCCESS) {
    u->gpu = (unsigned int)env_int("FAKE_NVML_UTIL", 50);
    u->memory = u->gpu / 2;
  }
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && type != 1) /* NVML_CLOCK_SM */
    return NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS && (r = injected("clock")) == NVML_SUCCESS)
    *mhz = 1410u + 10u * (unsigned int)*d;
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && sensor != 0) /* NVML_TEMPERATURE_GPU */
    return NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS && (r = injected("temp")) == NVML_SUCCESS)
    *t = (unsigned int)(env_int("FAKE_NVML_TEMP", 60) + *d);
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && (r = injected("power")) == NVML_SUCCESS) *mw = 123456;
  return r;
}

static nvmlReturn_t reasons(nvmlDevice_t d, unsigned long long *bits) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && (r = injected("reasons")) == NVML_SUCCESS)
    *bits = 0x4; /* nvmlClocksEventReasonSwPowerCap */
  return r;
}

#if defined(FAKE_V1)
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                              unsigned long long *bits) {
  return reasons(d, bits);
}
#else
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                           unsigned long long *bits) {
  return reasons(d, bits);
}
#endif

#if defined(FAKE_CC)
/* Only its presence matters: it marks a library of the R530 era (see sw_gpu.c). */
EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t d, void *info) {
  (void)info;
  return check(d);
}
#endif

/* Appends to pids[] the processes FAKE_NVML_PROCS puts in device dev's list (graphics or not). */
static int listed(int dev, int graphics, unsigned int *pids) {
  const char *s = getenv("FAKE_NVML_PROCS");
  int n = 0;
  while (s && *s && n < MAX_PROCS) {
    char *end;
    long d = strtol(s, &end, 10);
    if (*end != ':') break;
    long pid = strtol(end + 1, &end, 10);
    long times = 1;
    int in_c = 1, in_g = 0;
    if (*end == '*') {
      times = strtol(end + 1, &end, 10);
    } else if (*end == ':') {
      end++;
      in_c = in_g = 0;
      for (; *end == 'c' || *end == 'g'; end++) *(*end == 'c' ? &in_c : &in_g) = 1;
    }
    if (d == dev && (graphics ? in_g : in_c))
      for (long k = 0; k < times && n < MAX_PROCS; k++) pids[n++] = (unsigned int)(pid + k);
    s = *end == ',' ? end + 1 : NULL;
  }
  return n;
}

/* The NVML contract: *count is the room in infos; too little room sets *count to the number
 * needed and returns NVML_ERROR_INSUFFICIENT_SIZE. */
static nvmlReturn_t processes(nvmlDevice_t d, unsigned int *count, proc_info *infos, int graphics) {
  nvmlReturn_t r = check(d);
  if (r != NVML_SUCCESS || (r = injected("procs")) != NVML_SUCCESS) return r;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  static unsigned int pids[MAX_PROCS];
  int n = listed(*d, graphics, pids);
  if (*count < (unsigned int)n) {
    *count = (unsigned int)n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && !infos) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < n; i++) {
    memset(&infos[i], 0xAB, sizeof infos[i]); /* the fields the sampler must not read as pids */
    infos[i].pid = pids[i];
    infos[i].usedGpuMemory = 1ull << 20;
  }
  *count = (unsigned int)n;
  return NVML_SUCCESS;
}

#if defined(FAKE_V1)
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *count,
                                                         proc_info *infos) {
  return processes(d, count, infos, 0);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *count,
                                                          proc_info *infos) {
  return processes(d, count, infos, 1);
}
#else
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                            proc_info *infos) {
  return processes(d, count, infos, 0);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                             proc_info *infos) {
  return processes(d, count, infos, 1);
}
#endif

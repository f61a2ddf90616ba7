/* sw_fingerprint.c: machine fingerprint from uname, sysconf, /proc and `splat-train devices`. */
#ifdef __APPLE__
/* The build defines _POSIX_C_SOURCE, which hides getloadavg, sysctlbyname and friends. */
#define _DARWIN_C_SOURCE 1
#endif
#include "sw_fingerprint.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_sha256.h"

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

static void trim(char *s) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
}

static void cpu_model(char *dst, size_t cap) {
#ifdef __APPLE__
  /* "Apple M4 Max" on Apple Silicon; no /proc/cpuinfo on macOS. */
  size_t len = cap;
  if (sysctlbyname("machdep.cpu.brand_string", dst, &len, NULL, 0) != 0) dst[0] = '\0';
  return;
#endif
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  dst[0] = '\0';
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    /* x86 says "model name", many ARM kernels only "Hardware" or "CPU part". */
    if (!strncmp(line, "model name", 10) || !strncmp(line, "Hardware", 8) ||
        (!dst[0] && !strncmp(line, "Processor", 9))) {
      char *colon = strchr(line, ':');
      if (colon) {
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        copy(dst, cap, colon);
        trim(dst);
        if (!strncmp(line, "model name", 10)) break;
      }
    }
  }
  fclose(f);
}

static unsigned long long mem_total(void) {
#ifdef __APPLE__
  uint64_t mem = 0;
  size_t len = sizeof mem;
  if (sysctlbyname("hw.memsize", &mem, &len, NULL, 0) == 0) return mem;
#endif
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && psize > 0) return (unsigned long long)pages * (unsigned long long)psize;
  return 0;
}

/* Runs `splat_train devices --json` and returns its first device object (caller decrefs), or
 * NULL. The command's output is small, so reading it through popen is fine. */
static json_t *first_device(const char *splat_train) {
  if (!splat_train || access(splat_train, X_OK) != 0) return NULL;
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "'%s' devices --json 2>/dev/null", splat_train);
  if (strchr(splat_train, '\''))
    return NULL; /* quoting would break; skip the optional GPU part rather than risk the shell */
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, p)) > 0 && len < (1u << 20)) {
    if (len + n + 1 > cap) {
      cap = (len + n + 1) * 2;
      char *nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    memcpy(buf + len, chunk, n);
    len += n;
    buf[len] = '\0';
  }
  int st = pclose(p);
  if (!buf || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    free(buf);
    return NULL;
  }
  json_t *root = json_loads(buf, 0, NULL);
  free(buf);
  if (!root) return NULL;
  json_t *dev = json_is_array(root) ? json_array_get(root, 0)
                                    : json_array_get(json_object_get(root, "devices"), 0);
  json_t *out = json_is_object(dev) ? json_incref(dev) : NULL;
  json_decref(root);
  return out;
}

/* The worker calls this once at start-up. */
static void gpu_from_trainer(const char *splat_train, struct sw_msg_fingerprint *fp) {
  json_t *dev = first_device(splat_train);
  if (json_is_object(dev)) {
    copy(fp->gpu_name, sizeof fp->gpu_name, json_string_value(json_object_get(dev, "name")));
    copy(fp->gpu_driver, sizeof fp->gpu_driver, json_string_value(json_object_get(dev, "driver")));
    json_t *api = json_object_get(dev, "api");
    if (!api) api = json_object_get(dev, "api_version");
    copy(fp->gpu_api, sizeof fp->gpu_api, json_string_value(api));
    fp->gpu_kind = sw_gpu_kind_parse(json_string_value(json_object_get(dev, "kind")));
  }
  json_decref(dev);
}

void sw_fingerprint_machine_id(char *out, size_t cap) {
  out[0] = '\0';
#ifdef __APPLE__
  size_t len = cap;
  if (sysctlbyname("kern.uuid", out, &len, NULL, 0) != 0) out[0] = '\0';
#else
  static const char *const files[] = {"/etc/machine-id", "/var/lib/dbus/machine-id"};
  for (size_t i = 0; i < 2 && !out[0]; i++) {
    FILE *f = fopen(files[i], "r");
    if (!f) continue;
    if (!fgets(out, (int)cap, f)) out[0] = '\0';
    fclose(f);
    trim(out);
  }
#endif
  if (!out[0] && gethostname(out, cap) != 0) snprintf(out, cap, "unknown-host");
  out[cap - 1] = '\0';
}

/* command[0] of an exec trainer, resolved on PATH like execvp does, into out. */
static int exec_path(const char *trainer_json, char *out, size_t cap) {
  json_t *t = json_loads(trainer_json ? trainer_json : "{}", 0, NULL);
  const char *prog =
      json_string_value(json_array_get(json_object_get(json_object_get(t, "exec"), "command"), 0));
  int found = 0;
  if (prog && strchr(prog, '/')) {
    snprintf(out, cap, "%s", prog);
    found = 1;
  } else if (prog && *prog) {
    found = sw_fs_find_in(getenv("PATH"), prog, SW_FS_FIND_EXEC, out, cap);
  }
  json_decref(t);
  return found;
}

char *sw_fingerprint_env(const char *splat_train, const char *trainer_json) {
  json_t *t = json_loads(trainer_json ? trainer_json : "{}", 0, NULL);
  int is_exec = json_object_get(t, "exec") != NULL;
  json_decref(t);
  char exe[4200], hex[SW_SHA256_HEX_LEN];
  const char *bin = NULL;
  if (is_exec)
    bin = exec_path(trainer_json, exe, sizeof exe) ? exe : NULL;
  else
    bin = splat_train;
  json_t *o = json_object();
  if (!o) return NULL;
  if (bin && sw_sha256_file(bin, hex, NULL) == 0)
    json_object_set_new(o, "trainer_sha256", json_string(hex));
  else
    json_object_set_new(o, "trainer_sha256", json_null());
  json_t *dev = first_device(splat_train);
  static const char *const keys[2][2] = {{"device", "name"}, {"driver", "driver"}};
  for (int k = 0; k < 2; k++) {
    const char *v = json_string_value(json_object_get(dev, keys[k][1]));
    json_object_set_new(o, keys[k][0], json_string(v ? v : ""));
  }
  json_decref(dev);
  char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(o);
  return s;
}

int sw_fingerprint_collect(const char *splat_train, struct sw_msg_fingerprint *fp,
                           struct sw_err *err) {
  memset(fp, 0, sizeof *fp);
  struct utsname u;
  if (uname(&u) == 0) {
    copy(fp->hostname, sizeof fp->hostname, u.nodename);
    snprintf(fp->os, sizeof fp->os, "%s %s", u.sysname, u.release);
    copy(fp->arch, sizeof fp->arch, u.machine);
    if (sw_msg_kv_add(&fp->extra, &fp->n_extra, "kernel_version", u.version))
      return sw_err_set(err, SW_ENOMEM, "fingerprint: out of memory");
  }
  char host[256];
  if (!fp->hostname[0] && gethostname(host, sizeof host) == 0) {
    host[sizeof host - 1] = '\0';
    copy(fp->hostname, sizeof fp->hostname, host);
  }
  cpu_model(fp->cpu_model, sizeof fp->cpu_model);
  sw_fingerprint_machine_id(fp->machine_id, sizeof fp->machine_id);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  fp->cores = cores > 0 ? (uint32_t)cores : 0;
  fp->mem_bytes = mem_total();
  fp->gpu_kind = SW_GPU_NONE;
  gpu_from_trainer(splat_train, fp);
  return 0;
}

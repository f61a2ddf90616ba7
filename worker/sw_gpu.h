/* sw_gpu.h: the worker's GPU sampler, read from NVIDIA's NVML (libnvidia-ml) at run time.
 *
 * NVML is never a build dependency: sw_gpu_open() dlopens "libnvidia-ml.so.1" (env SW_NVML_LIB
 * names another path, which is how the tests load tests/fake_nvml.c; env SW_NVML=0 turns the
 * sampler off) and looks up the functions it uses by name. The types those functions take are
 * declared in sw_gpu.c from NVIDIA's documented ABI; no NVML header is needed. Most machines
 * have no NVIDIA GPU, so a missing library, a library without the core entry points, a failed
 * nvmlInit or a driver that sees no GPU all mean "no GPU sampler": sw_gpu_open() returns 0 with
 * *out == NULL and logs nothing. A function an older driver lacks just leaves its figure unknown.
 *
 * One sample (sw_gpu_sample) answers two questions for the load window of a run:
 *  - how busy the trainer's GPU is (utilisation, SM clock, temperature, power, and the clock
 *    event / throttle reasons that say why the clock is low), and
 *  - whether some other process shares that GPU (n_foreign), which would contaminate the run.
 *
 * Which GPU is "the trainer's": the compute and graphics process lists of every GPU are read and
 * each distinct pid is passed to the caller's is_ours(). The first GPU (lowest NVML index) that
 * lists a pid of ours is chosen. When none does: with one GPU, GPU 0; with several, the GPU
 * whose NVML index env SW_GPU_INDEX names (read at open), else GPU 0. NVML indices follow PCI
 * bus order, as nvidia-smi shows them, which need not be CUDA's or Vulkan's device order.
 *
 * The attribution rule for n_foreign (n_procs counts distinct pids of the chosen GPU's compute
 * and graphics lists together; a process in both lists counts once):
 *  1. is_ours == NULL means no trainer runs: every listed process is foreign,
 *     n_foreign = n_procs.
 *  2. A pid of ours is listed on some GPU: n_foreign = processes of the chosen GPU that are not
 *     ours (0 when the trainer is alone).
 *  3. is_ours != NULL (a trainer runs) but no GPU lists a pid of ours: if the chosen GPU lists no
 *     process, n_foreign = 0; otherwise n_foreign = -1, "cannot attribute". This is what a
 *     container without the host's pid namespace looks like (NVML reports host pids, which never
 *     match ours), and also a trainer that has not yet created its GPU context. Counting those
 *     processes as foreign would raise a false alarm on every containerised run, so the sampler
 *     says it does not know; the caller decides what an unknown means for the run.
 *  4. A process list of the chosen GPU that NVML refuses (for a reason other than "not
 *     supported", which means the GPU has no such list) makes the counts incomplete:
 *     n_procs = -1, and n_foreign = -1 too unless the other list already shows foreign
 *     processes (then their count, a lower bound, since the alarm is real either way).
 *     err says which list failed. Neither list readable: n_procs = n_foreign = -1.
 * foreign_pid holds the first min(n_foreign, 4) foreign pids in ascending order, 0 after them.
 *
 * Blocking: sw_gpu_open() calls nvmlInit, which can take a second or more when the driver is
 * not kept loaded (no persistence mode). A sample makes 2 NVML calls per GPU for the process
 * lists (a few more when a list outgrows the buffer) and 5-6 for the chosen GPU; each is a
 * synchronous driver query, normally well under a millisecond. Nothing loops without bound:
 * a process list grows its buffer at most 3 times, up to SW_GPU_MAX_PROCS entries.
 *
 * Lifecycle: if sw_gpu_open() hands out a handle, sw_gpu_close() must be called (it shuts NVML
 * down and unloads it). A handle is used by one thread at a time. Every function accepts a NULL
 * handle (the "no NVML" case): count 0, names NULL, sample SW_ENOTFOUND. */
#ifndef SW_GPU_H
#define SW_GPU_H

#include <stdint.h>

#include "sw_err.h"

typedef struct sw_gpu sw_gpu_t;

/* Largest process list read per GPU and per list; a longer one is reported as unreadable. */
#define SW_GPU_MAX_PROCS 1024
/* The throttle value when NVML could not give the reasons. */
#define SW_GPU_THROTTLE_UNKNOWN UINT64_MAX

/* One sample of the chosen GPU. A figure NVML could not give is NAN (doubles) or -1 (counts). */
struct sw_gpu_sample {
  int device;          /* NVML index of the sampled GPU */
  double util_pct;     /* percent of the last sample period a kernel ran */
  double mem_util_pct; /* percent of the last sample period device memory was read or written */
  double sm_mhz;       /* current SM clock */
  double temp_c;       /* GPU core temperature */
  double power_w;      /* board power draw (NVML reports milliwatts) */
  uint64_t throttle;   /* NVML clock event reasons bit mask; SW_GPU_THROTTLE_UNKNOWN if unknown */
  int n_procs;         /* distinct processes on the GPU (compute + graphics), -1 if unknown */
  int n_foreign;       /* processes that are not ours, -1 when they cannot be attributed */
  int32_t foreign_pid[4]; /* the first min(n_foreign, 4) foreign pids, ascending; 0 after */
};

/* Loads and initialises NVML and reads the GPU list (count, names, UUIDs). Returns 0 with *out a
 * handle, 0 with *out == NULL when there is no usable NVML (see above; not an error), SW_EINVAL
 * when env SW_GPU_INDEX is not the index of a GPU NVML sees, SW_ENOMEM. Blocks in nvmlInit. */
int sw_gpu_open(sw_gpu_t **out, struct sw_err *err);
/* Shuts NVML down, unloads it and frees the handle; NULL-safe, nulls the caller's pointer. */
void sw_gpu_close(sw_gpu_t **self_p);

/* Number of GPUs NVML sees (0 for a NULL handle). */
int sw_gpu_count(const sw_gpu_t *self);
/* Product name and UUID ("GPU-...") of GPU i, borrowed until sw_gpu_close; "" when NVML could
 * not give it, NULL when i is out of range or self is NULL. */
const char *sw_gpu_name(const sw_gpu_t *self, int i);
const char *sw_gpu_uuid(const sw_gpu_t *self, int i);

/* Takes one sample of the trainer's GPU into *out, choosing the GPU and counting foreign
 * processes as the header comment says. is_ours(ctx, pid) returns non-zero for a pid that
 * belongs to our trainer (e.g. a member of its process group); it is called once per distinct
 * pid per GPU and must not block. is_ours == NULL means no trainer runs.
 * Returns 0 when the GPU was sampled, even partly: each figure NVML refused is unknown, and the
 * first refusal other than "not supported" is also described in err (code SW_EDEVICE), so the
 * caller can say why a figure is missing; the return value alone says success (pass a cleared
 * err per call, since the first error recorded wins). Returns SW_EDEVICE when NVML refused
 * every query of the chosen GPU, process lists included (a GPU fallen off the bus), and
 * SW_ENOTFOUND for a NULL handle; *out is then all unknown but for device. */
int sw_gpu_sample(sw_gpu_t *self, int (*is_ours)(void *ctx, int32_t pid), void *ctx,
                  struct sw_gpu_sample *out, struct sw_err *err);

#endif

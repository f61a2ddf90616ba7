/* sw_fingerprint.h: what a worker tells the coordinator about its machine in Hello: host name,
 * OS, architecture, CPU model, cores, memory, and the GPU as `splat-train devices --json`
 * reports it (absent when there is no trainer or no Vulkan device). The scheduler matches
 * placement globs against these fields, and the store keeps them with every result. */
#ifndef SW_FINGERPRINT_H
#define SW_FINGERPRINT_H

#include "sw_err.h"
#include "sw_msg.h"

/* Fills fp (zeroed first). splat_train: path of the trainer used to query the GPU, or NULL to
 * skip the GPU part. A missing /proc file leaves its field empty rather than failing: a
 * fingerprint with less detail is still useful. Extras (fp->extra) are malloc'd: free them
 * with free(fp->extra) or through sw_msg_clear of the Hello that owns fp. Returns 0 or
 * SW_ENOMEM. */
int sw_fingerprint_collect(const char *splat_train, struct sw_msg_fingerprint *fp,
                           struct sw_err *err);

/* The host's identity into out (cap bytes): /etc/machine-id (or /var/lib/dbus/machine-id) on
 * Linux, kern.uuid on macOS, else the host name. Workers on one host share it: the gate counts
 * machines by it, and default worker ids start with it. */
void sw_fingerprint_machine_id(char *out, size_t cap);

/* The environment a run's numbers depend on, as a compact JSON object (malloc'd, caller frees;
 * NULL only when out of memory): {"trainer_sha256": the builtin trainer's or the exec trainer's
 * executable (command[0], searched on PATH), "device": ..., "driver": ... from `splat-train
 * devices --json`}. Taken before and after every run; a change inside a pair invalidates it
 * (docs/gate-rules.md). trainer_json is the run's trainer object ({"builtin":{}} or
 * {"exec":{"command":[...]}}); splat_train may be NULL. */
char *sw_fingerprint_env(const char *splat_train, const char *trainer_json);

#endif

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

#endif

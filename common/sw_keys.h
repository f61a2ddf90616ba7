/* sw_keys.h: CurveZMQ key files (docs/security.md), read the same way by every daemon and client.
 *
 * A key file holds one 40-character z85 key, surrounding whitespace allowed. A key directory
 * (`splatsweep keygen DIR`) holds DIR/public.key and DIR/secret.key; a client's directory also
 * holds DIR/coordinator.pub, the public key of the coordinator it talks to. Allow-lists
 * (coordinator/sw_zap.c) are folders of public key files read with sw_keys_read. */
#ifndef SW_KEYS_H
#define SW_KEYS_H

#include "sw_err.h"

#define SW_KEYS_Z85_LEN 40

/* Reads a z85 key file into key (41 bytes, NUL-terminated). Returns 0, SW_ENOTFOUND (no
 * file), SW_EIO or SW_EINVAL (not one 40-character z85 key), naming the path in err. */
int sw_keys_read(const char *path, char key[SW_KEYS_Z85_LEN + 1], struct sw_err *err);

/* Loads the key set of dir: DIR/public.key into pub, DIR/secret.key into sec and, when server
 * is not NULL, DIR/coordinator.pub into server (a client's set; the coordinator passes NULL).
 * Read in that order; the first failure is returned with sw_keys_read's codes. */
int sw_keys_load(const char *dir, char pub[SW_KEYS_Z85_LEN + 1], char sec[SW_KEYS_Z85_LEN + 1],
                 char server[SW_KEYS_Z85_LEN + 1], struct sw_err *err);

#endif

/* sw_sha256.h: SHA-256 of buffers and files (libsodium), as lowercase hex. */
#ifndef SW_SHA256_H
#define SW_SHA256_H

#include <stddef.h>

#include "sw_err.h"

#define SW_SHA256_HEX_LEN 65 /* 64 hex digits + NUL */

/* Hash of len bytes at data into hex (SW_SHA256_HEX_LEN bytes). */
void sw_sha256_buf(const void *data, size_t len, char hex[SW_SHA256_HEX_LEN]);
/* Hash of a file's whole content. Returns 0 or SW_EIO with the path in err. */
int sw_sha256_file(const char *path, char hex[SW_SHA256_HEX_LEN], struct sw_err *err);

/* Incremental hashing, for trees of files (a scene directory) or several buffers. */
struct sw_sha256 {
  unsigned char state[128]; /* large enough for crypto_hash_sha256_state (checked in .c) */
};
void sw_sha256_init(struct sw_sha256 *h);
void sw_sha256_update(struct sw_sha256 *h, const void *data, size_t len);
int sw_sha256_update_file(struct sw_sha256 *h, const char *path, struct sw_err *err);
void sw_sha256_final(struct sw_sha256 *h, char hex[SW_SHA256_HEX_LEN]);

#endif

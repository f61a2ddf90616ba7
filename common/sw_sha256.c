/* sw_sha256.c: SHA-256 through libsodium's crypto_hash_sha256. */
#include "sw_sha256.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(crypto_hash_sha256_state) <= sizeof(((struct sw_sha256 *)0)->state),
               "sw_sha256 state too small for libsodium");

static void to_hex(const unsigned char *d, char hex[SW_SHA256_HEX_LEN]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[64] = '\0';
}

void sw_sha256_init(struct sw_sha256 *h) {
  crypto_hash_sha256_init((crypto_hash_sha256_state *)(void *)h->state);
}

void sw_sha256_update(struct sw_sha256 *h, const void *data, size_t len) {
  crypto_hash_sha256_update((crypto_hash_sha256_state *)(void *)h->state, data, len);
}

int sw_sha256_update_file(struct sw_sha256 *h, const char *path, struct sw_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return sw_err_set(err, SW_EIO, "%s: %s", path, strerror(errno));
  unsigned char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sw_sha256_update(h, buf, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) return sw_err_set(err, SW_EIO, "%s: read error", path);
  return 0;
}

void sw_sha256_final(struct sw_sha256 *h, char hex[SW_SHA256_HEX_LEN]) {
  unsigned char out[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final((crypto_hash_sha256_state *)(void *)h->state, out);
  to_hex(out, hex);
}

void sw_sha256_buf(const void *data, size_t len, char hex[SW_SHA256_HEX_LEN]) {
  struct sw_sha256 h;
  sw_sha256_init(&h);
  sw_sha256_update(&h, data, len);
  sw_sha256_final(&h, hex);
}

int sw_sha256_file(const char *path, char hex[SW_SHA256_HEX_LEN], struct sw_err *err) {
  struct sw_sha256 h;
  sw_sha256_init(&h);
  int rc = sw_sha256_update_file(&h, path, err);
  if (rc) return rc;
  sw_sha256_final(&h, hex);
  return 0;
}

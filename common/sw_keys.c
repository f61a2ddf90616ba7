/* sw_keys.c: CurveZMQ key files (sw_keys.h). */
#include "sw_keys.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "sw_fs.h"

int sw_keys_read(const char *path, char key[SW_KEYS_Z85_LEN + 1], struct sw_err *err) {
  char *data = NULL;
  size_t len = 0;
  int rc = sw_fs_read_all(path, &data, &len, err);
  if (rc) return rc;
  char *p = data;
  while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
  size_t n = 0;
  while (p[n] && p[n] != ' ' && p[n] != '\n' && p[n] != '\r' && p[n] != '\t') n++;
  uint8_t raw[32];
  if (n != SW_KEYS_Z85_LEN) {
    free(data);
    return sw_err_set(err, SW_EINVAL, "%s: expected a 40-character z85 key", path);
  }
  memcpy(key, p, SW_KEYS_Z85_LEN);
  key[SW_KEYS_Z85_LEN] = '\0';
  free(data);
  if (!zmq_z85_decode(raw, key)) return sw_err_set(err, SW_EINVAL, "%s: not a valid z85 key", path);
  return 0;
}

int sw_keys_load(const char *dir, char pub[SW_KEYS_Z85_LEN + 1], char sec[SW_KEYS_Z85_LEN + 1],
                 char server[SW_KEYS_Z85_LEN + 1], struct sw_err *err) {
  char p[4200];
  snprintf(p, sizeof p, "%s/public.key", dir);
  int rc = sw_keys_read(p, pub, err);
  snprintf(p, sizeof p, "%s/secret.key", dir);
  if (!rc) rc = sw_keys_read(p, sec, err);
  snprintf(p, sizeof p, "%s/coordinator.pub", dir);
  if (!rc && server) rc = sw_keys_read(p, server, err);
  return rc;
}

/* sw_err.c: the first-error-wins error struct. */
#include "sw_err.h"

#include <stdio.h>
#include <string.h>

int sw_err_vset(struct sw_err *err, int code, const char *fmt, va_list ap) {
  if (!err || err->code != 0) return code;
  err->code = code;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  return code;
}

int sw_err_set(struct sw_err *err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sw_err_vset(err, code, fmt, ap);
  va_end(ap);
  return code;
}

void sw_err_prefix(struct sw_err *err, const char *fmt, ...) {
  if (!err || err->code == 0) return;
  char prefix[SW_ERR_MSG_MAX];
  char old[SW_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
}

void sw_err_clear(struct sw_err *err) {
  if (!err) return;
  err->code = 0;
  err->msg[0] = '\0';
}

const char *sw_strerror(int code) {
  switch (code) {
  case SW_OK: return "success";
  case SW_EINVAL: return "invalid input";
  case SW_EIO: return "I/O error";
  case SW_ENOMEM: return "out of memory";
  case SW_EPROTO: return "protocol error";
  case SW_ENOTFOUND: return "not found";
  case SW_ESTATE: return "invalid state";
  case SW_EDB: return "database error";
  case SW_ETIMEOUT: return "timed out";
  case SW_EDEVICE: return "device error";
  case SW_ENET: return "network error";
  case SW_ECHILD: return "child process failed";
  case SW_EDIVERGED: return "training diverged";
  default: return "unknown error";
  }
}

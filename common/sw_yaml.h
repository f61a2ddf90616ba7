/* sw_yaml: guards in front of libfyaml 0.7.12 for text from outside (a sweep spec, a trainer
 * config file): what it cannot be trusted to read is refused with FILE:LINE:COL before it reads
 * it. */
#ifndef SW_YAML_H
#define SW_YAML_H

#include <stddef.h>

#include "sw_err.h"

struct fy_event;
struct fy_diag;

/* A diagnostic object for a libfyaml parse (.diag of its fy_parse_cfg, with FYPCF_COLLECT_DIAG)
 * that prints nothing and collects the errors, for sw_yaml_diag_error. (With libfyaml's default
 * printing diagnostics, 0.7.12 reads past a buffer while displaying some errors: found by fuzzing
 * the config loader, `seed: "` then tabs and carriage returns.) NULL when out of memory. */
struct fy_diag *sw_yaml_diag_new(void);

/* Whether diag collected an error (not only warnings). */
int sw_yaml_diag_has_error(struct fy_diag *diag);

/* SW_EINVAL with "FILE:LINE:COL: YAML: MESSAGE" for the first error diag collected, or
 * "FILE:1:1: EMPTY" when it holds none (libfyaml builds no document, without a diagnostic, from
 * text holding no YAML node). */
int sw_yaml_diag_error(const char *file, struct fy_diag *diag, const char *empty,
                       struct sw_err *err);

/* Offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or n when the text is UTF-8. */
size_t sw_yaml_utf8_bad_at(const unsigned char *s, size_t n);

/* 0 when yaml[0, len) is UTF-8 text; else SW_EINVAL, "FILE:LINE:COL: not UTF-8 text (byte 0xNN)"
 * at the first bad byte (columns count characters). */
int sw_yaml_utf8_check(const char *file, const char *yaml, size_t len, struct sw_err *err);

/* YAML text with its line breaks as LF only: *copy gets a malloc'd copy of text[0, len) in which
 * every CR LF and every lone CR is one LF (NUL-terminated, *copy_len bytes), or NULL when the text
 * has no CR (use it as it is). YAML reads all three as one line break and folds them into LF in
 * scalar content, so this changes no value and no LINE:COL; but libfyaml 0.7.12 loses 512 bytes
 * on a quoted scalar that begins with CR LF breaks ("\r\n\r\n ", found by fuzzing the config
 * loader), and a coordinator loads specs for as long as it runs. 0, or SW_ENOMEM. */
int sw_yaml_lf_breaks(const char *text, size_t len, char **copy, size_t *copy_len,
                      struct sw_err *err);

/* Whether the scalar event ev of the text it was parsed from is single-quoted with two or more
 * escaped quotes ('') in a row (see sw_yaml.c for why that is refused). */
int sw_yaml_quote_run(const char *yaml, size_t len, struct fy_event *ev);

/* One event pass over the text (nothing is built): SW_EINVAL with FILE:LINE:COL at the opening
 * quote of the first single-quoted scalar sw_yaml_quote_run refuses, or at the first syntax
 * error; SW_ENOMEM when the parser cannot be made; else 0. */
int sw_yaml_quote_runs_check(const char *file, const char *yaml, size_t len, struct sw_err *err);

#endif

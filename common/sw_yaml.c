/* sw_yaml.c: see sw_yaml.h. */
#include "sw_yaml.h"

#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void diag_sink(struct fy_diag *diag, void *user, const char *buf, size_t len) {
  (void)diag, (void)user, (void)buf, (void)len;
}

struct fy_diag *sw_yaml_diag_new(void) {
  struct fy_diag_cfg dcfg;
  fy_diag_cfg_default(&dcfg);
  dcfg.fp = NULL;
  dcfg.output_fn = diag_sink;
  dcfg.colorize = false;
  struct fy_diag *diag = fy_diag_create(&dcfg);
  if (diag) fy_diag_set_collect_errors(diag, true);
  return diag;
}

int sw_yaml_diag_has_error(struct fy_diag *diag) {
  void *it = NULL;
  struct fy_diag_error *e;
  while (diag && (e = fy_diag_errors_iterate(diag, &it)) != NULL)
    if (e->type >= FYET_ERROR) return 1;
  return 0;
}

int sw_yaml_diag_error(const char *file, struct fy_diag *diag, const char *empty,
                       struct sw_err *err) {
  void *it = NULL;
  struct fy_diag_error *e;
  while (diag && (e = fy_diag_errors_iterate(diag, &it)) != NULL) {
    if (e->type < FYET_ERROR) continue;
    char msg[SW_ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", e->msg ? e->msg : "YAML syntax error");
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
    /* libfyaml's collected positions are already 1-based. */
    return sw_err_set(err, SW_EINVAL, "%s:%d:%d: YAML: %s", file, e->line > 0 ? e->line : 1,
                      e->column > 0 ? e->column : 1, msg);
  }
  return sw_err_set(err, SW_EINVAL, "%s:1:1: %s", file, empty);
}

/* A YAML text is Unicode; and libfyaml 0.7.12 loops forever on a malformed UTF-8 sequence inside
 * a directive line ("%" and one byte 0xa5 is enough; found by fuzzing the spec loader, fixed
 * upstream after 0.7.12 by "Fix infinite loop in scan directive for bad utf8 input"), so no such
 * text may reach it. sw_msg.c checks the same rules for wire fields without a position. */
size_t sw_yaml_utf8_bad_at(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    unsigned cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    unsigned min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (!len || n - i < len) return i;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return n;
}

int sw_yaml_utf8_check(const char *file, const char *yaml, size_t len, struct sw_err *err) {
  size_t bad = sw_yaml_utf8_bad_at((const unsigned char *)yaml, len);
  if (bad >= len) return 0;
  int line = 1, col = 1;
  for (size_t i = 0; i < bad; i++) {
    /* LF, CR LF and a lone CR each end a line, as YAML reads them. */
    if (yaml[i] == '\n' || (yaml[i] == '\r' && (i + 1 >= bad || yaml[i + 1] != '\n')))
      line++, col = 1;
    else if (yaml[i] != '\r' && ((unsigned char)yaml[i] & 0xc0) != 0x80)
      col++;
  }
  return sw_err_set(err, SW_EINVAL, "%s:%d:%d: not UTF-8 text (byte 0x%02x)", file, line, col,
                    (unsigned char)yaml[bad]);
}

int sw_yaml_lf_breaks(const char *text, size_t len, char **copy, size_t *copy_len,
                      struct sw_err *err) {
  *copy = NULL;
  *copy_len = 0;
  if (!memchr(text, '\r', len)) return 0;
  char *out = malloc(len + 1);
  if (!out) return sw_err_set(err, SW_ENOMEM, "out of memory for a YAML text of %zu bytes", len);
  size_t w = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '\r') {
      out[w++] = text[i];
      continue;
    }
    out[w++] = '\n';
    if (i + 1 < len && text[i + 1] == '\n') i++;
  }
  out[w] = 0;
  *copy = out;
  *copy_len = w;
  return 0;
}

/* libfyaml 0.7.12 unescapes a run of two or more escaped quotes in a single-quoted scalar wrongly
 * when text follows it ('a''''b' reads as a''' instead of a''b) and loses the buffer it unescapes
 * into at five or more (2 KiB per scalar, found by fuzzing: "x: ''''''''''''"; a coordinator loads
 * specs for as long as it runs). An event pass never asks for a scalar's text, so the scalar can be
 * refused from the raw text between the event's marks, before anything formats it. */
int sw_yaml_quote_run(const char *yaml, size_t len, struct fy_event *ev) {
  struct fy_token *tok = fy_event_get_token(ev);
  if (!tok || fy_token_scalar_style(tok) != FYSS_SINGLE_QUOTED) return 0;
  /* The marks hold the text between the quotes. */
  const struct fy_mark *s = fy_event_start_mark(ev), *e = fy_event_end_mark(ev);
  if (!s || !e) return 0;
  size_t end = e->input_pos < len ? e->input_pos : len, run = 0;
  for (size_t i = s->input_pos; i < end; i++) {
    run = yaml[i] == '\'' ? run + 1 : 0;
    if (run >= 4) return 1;
  }
  return 0;
}

int sw_yaml_quote_runs_check(const char *file, const char *yaml, size_t len, struct sw_err *err) {
  struct fy_diag *diag = sw_yaml_diag_new();
  struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_JSON_NONE,
                              .diag = diag};
  struct fy_parser *fyp = diag ? fy_parser_create(&pcfg) : NULL;
  if (!fyp || fy_parser_set_string(fyp, yaml, len)) {
    fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return sw_err_set(err, SW_ENOMEM, "%s: out of memory for the YAML parser", file);
  }
  int rc = 0;
  struct fy_event *ev;
  while (!rc && (ev = fy_parser_parse(fyp)) != NULL) {
    if (ev->type == FYET_SCALAR && sw_yaml_quote_run(yaml, len, ev)) {
      const struct fy_mark *m = fy_event_start_mark(ev);
      int line = m ? m->line + 1 : 1, col = m ? m->column + 1 : 1;
      if (col > 1) col--; /* the event starts after the opening quote */
      rc = sw_err_set(err, SW_EINVAL,
                      "%s:%d:%d: YAML: a single-quoted scalar with 2 or more escaped quotes ('') "
                      "in a row (write it double-quoted)",
                      file, line, col);
    }
    fy_parser_event_free(fyp, ev);
  }
  if (!rc && fy_diag_got_error(diag)) rc = sw_yaml_diag_error(file, diag, "no YAML document", err);
  fy_parser_destroy(fyp);
  fy_diag_destroy(diag);
  return rc;
}

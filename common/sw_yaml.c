/* sw_yaml.c: see sw_yaml.h. */
#include "sw_yaml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

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

/* 1-based line and column (in characters) of byte offset off of text. LF, CR LF and a lone CR
 * each end a line, as YAML reads them. */
static void pos_at(const char *text, size_t off, int *line, int *col) {
  *line = 1, *col = 1;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= off || text[i + 1] != '\n')))
      (*line)++, *col = 1;
    else if (text[i] != '\r' && ((unsigned char)text[i] & 0xc0) != 0x80)
      (*col)++;
  }
}

int sw_yaml_utf8_check(const char *file, const char *yaml, size_t len, struct sw_err *err) {
  size_t bad = sw_yaml_utf8_bad_at((const unsigned char *)yaml, len);
  if (bad >= len) return 0;
  int line, col;
  pos_at(yaml, bad, &line, &col);
  return sw_err_set(err, SW_EINVAL, "%s:%d:%d: not UTF-8 text (byte 0x%02x)", file, line, col,
                    (unsigned char)yaml[bad]);
}

/* Whether k is the merge key `<<` (a plain scalar). */
static int is_merge_key(const struct sw_ynode *k) {
  return k && k->kind == SW_YSCALAR && k->plain && k->len == 2 && !memcmp(k->text, "<<", 2);
}

/* Whether a and b are scalars with the same text (the same key of a mapping). */
static int same_text(const struct sw_ynode *a, const struct sw_ynode *b) {
  return a->kind == SW_YSCALAR && b->kind == SW_YSCALAR && a->len == b->len &&
         !memcmp(a->text, b->text, a->len);
}

static int yaml_oom(const char *file, struct sw_err *err) {
  return sw_err_set(err, SW_ENOMEM, "%s: out of memory for its YAML", file);
}

void sw_ydoc_free(struct sw_ydoc *doc) {
  if (!doc) return;
  for (size_t i = 0; i < doc->n_all; i++) {
    struct sw_ynode *n = doc->all[i];
    free(n->text);
    free(n->anchor);
    free(n->items);
    free(n->pairs);
    free(n);
  }
  free(doc->all);
  free(doc);
}

/* ---- building the tree from libyaml's events ---------------------------------------------- */

struct builder {
  const char *file;
  const char *text;
  size_t len;
  const struct sw_ylimits *lim;
  struct sw_err *err;
  struct sw_ydoc *doc;
  struct sw_ynode **open; /* the collections not yet ended, outermost first */
  size_t depth;
  size_t nodes;
  struct sw_ynode **anchored; /* nodes with an anchor, in the order they ended */
  size_t n_anchored;
};

static int oom(struct builder *B) { return yaml_oom(B->file, B->err); }

static int failf(struct builder *B, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int failf(struct builder *B, int line, int col, const char *fmt, ...) {
  char msg[SW_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sw_err_set(B->err, SW_EINVAL, "%s:%d:%d: %s", B->file, line, col, msg);
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = 0;
  return d;
}

static int grow(void **arr, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t c = *cap ? 2 * *cap : 4;
  void *a = realloc(*arr, c * size);
  if (!a) return -1;
  *arr = a, *cap = c;
  return 0;
}

static struct sw_ynode *new_node(struct builder *B, enum sw_ykind kind, const yaml_mark_t *m,
                                 const yaml_char_t *anchor) {
  struct sw_ydoc *d = B->doc;
  if (grow((void **)&d->all, &d->cap_all, d->n_all, sizeof *d->all)) return NULL;
  struct sw_ynode *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  if (anchor && !(n->anchor = strdup((const char *)anchor))) {
    free(n);
    return NULL;
  }
  n->kind = kind;
  n->line = (int)m->line + 1;
  n->col = (int)m->column + 1;
  d->all[d->n_all++] = n;
  return n;
}

/* Hangs n under the innermost open collection (or makes it the root). */
static int attach(struct builder *B, struct sw_ynode *n) {
  if (!B->depth) {
    B->doc->root = n;
    return 0;
  }
  struct sw_ynode *p = B->open[B->depth - 1];
  if (p->kind == SW_YSEQ) {
    if (grow((void **)&p->items, &p->cap, p->n, sizeof *p->items)) return oom(B);
    p->items[p->n++] = n;
    return 0;
  }
  /* A mapping: a key starts a pair, a value completes the last one. */
  if (p->n && !p->pairs[p->n - 1].value) {
    p->pairs[p->n - 1].value = n;
    return 0;
  }
  if (p->n >= B->lim->map_keys)
    return failf(B, n->line, n->col, "YAML: a mapping of more than %zu keys (the limit)",
                 B->lim->map_keys);
  if (grow((void **)&p->pairs, &p->cap, p->n, sizeof *p->pairs)) return oom(B);
  p->pairs[p->n++] = (struct sw_ypair){n, NULL};
  return 0;
}

static int add_anchor(struct builder *B, struct sw_ynode *n) {
  if (!n->anchor) return 0;
  if (B->n_anchored >= B->lim->anchors)
    return failf(B, n->line, n->col, "YAML: more than %zu anchors (the limit)", B->lim->anchors);
  B->anchored[B->n_anchored++] = n;
  return 0;
}

/* A mapping's keys are unique: two scalar keys with the same text are refused at the second. */
static int check_keys(struct builder *B, const struct sw_ynode *m) {
  for (size_t i = 1; i < m->n; i++) {
    const struct sw_ynode *k = m->pairs[i].key;
    if (k->kind != SW_YSCALAR) continue;
    for (size_t j = 0; j < i; j++) {
      const struct sw_ynode *o = m->pairs[j].key;
      if (same_text(o, k))
        return failf(B, k->line, k->col, "YAML: duplicate key '%.*s' (first at line %d)",
                     (int)(k->len > 64 ? 64 : k->len), k->text, o->line);
    }
  }
  return 0;
}

/* One node event: counted against the limits, built, attached. */
static int on_node(struct builder *B, const yaml_event_t *ev) {
  const yaml_mark_t *m = &ev->start_mark;
  if (++B->nodes > B->lim->nodes)
    return failf(B, (int)m->line + 1, (int)m->column + 1,
                 "YAML: more than %zu YAML nodes (the limit)", B->lim->nodes);
  struct sw_ynode *n = NULL;
  int rc;
  switch (ev->type) {
  case YAML_SCALAR_EVENT:
    if (!(n = new_node(B, SW_YSCALAR, m, ev->data.scalar.anchor))) return oom(B);
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    n->len = ev->data.scalar.length;
    if (!(n->text = dup_n((const char *)ev->data.scalar.value, n->len))) return oom(B);
    if ((rc = attach(B, n)) || (rc = add_anchor(B, n))) return rc;
    return 0;
  case YAML_ALIAS_EVENT: {
    if (!(n = new_node(B, SW_YALIAS, m, ev->data.alias.anchor))) return oom(B);
    /* The latest anchor of that name that has ended: never the alias's own ancestors. */
    for (size_t i = B->n_anchored; i-- > 0 && !n->target;)
      if (!strcmp(B->anchored[i]->anchor, n->anchor)) n->target = B->anchored[i];
    if (!n->target)
      return failf(B, n->line, n->col, "YAML: alias '*%.64s' names no anchor before it", n->anchor);
    return attach(B, n);
  }
  default: { /* a sequence or a mapping starts */
    int seq = ev->type == YAML_SEQUENCE_START_EVENT;
    if (B->depth >= B->lim->depth)
      return failf(B, (int)m->line + 1, (int)m->column + 1,
                   "YAML: nested deeper than %zu levels (the limit)", B->lim->depth);
    n = new_node(B, seq ? SW_YSEQ : SW_YMAP, m,
                 seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor);
    if (!n) return oom(B);
    if ((rc = attach(B, n))) return rc;
    B->open[B->depth++] = n;
    return 0;
  }
  }
}

/* libyaml's error as FILE:LINE:COL at the problem, with what it was reading and where that
 * started. */
static int parse_error(struct builder *B, const yaml_parser_t *p) {
  if (p->error == YAML_MEMORY_ERROR) return oom(B);
  int line = 1, col = 1;
  if (p->error == YAML_READER_ERROR) {
    pos_at(B->text, p->problem_offset < B->len ? p->problem_offset : B->len, &line, &col);
    return failf(B, line, col, "YAML: %s", p->problem ? p->problem : "unreadable text");
  }
  line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
  const char *problem = p->problem ? p->problem : "syntax error";
  if (p->context)
    return failf(B, line, col, "YAML: %s (%s at %d:%d)", problem, p->context,
                 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
  return failf(B, line, col, "YAML: %s", problem);
}

static int build(struct builder *B, yaml_parser_t *p) {
  int docs = 0, rc = 0, done = 0;
  while (!rc && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(p, &ev)) return parse_error(B, p);
    switch (ev.type) {
    case YAML_STREAM_END_EVENT: done = 1; break;
    case YAML_DOCUMENT_START_EVENT:
      if (++docs > 1)
        rc = failf(B, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
                   "a second YAML document starts here (one document per file)");
      break;
    case YAML_SCALAR_EVENT:
    case YAML_ALIAS_EVENT:
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: rc = on_node(B, &ev); break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      if (B->depth) {
        struct sw_ynode *n = B->open[--B->depth];
        if (n->kind == SW_YMAP) rc = check_keys(B, n);
        if (!rc) rc = add_anchor(B, n);
      }
      break;
    default: break;
    }
    yaml_event_delete(&ev);
  }
  return rc;
}

static int resolve_doc(const char *file, struct sw_ydoc *doc, const struct sw_ylimits *lim,
                       struct sw_err *err);

int sw_yaml_load(const char *file, const char *text, size_t len, const struct sw_ylimits *lim,
                 struct sw_ydoc **out, struct sw_err *err) {
  *out = NULL;
  int rc = sw_yaml_utf8_check(file, text, len, err);
  if (rc) return rc;
  struct builder B = {file, text, len, lim, err, NULL, NULL, 0, 0, NULL, 0};
  B.doc = calloc(1, sizeof *B.doc);
  B.open = calloc(lim->depth + 1, sizeof *B.open);
  B.anchored = calloc(lim->anchors + 1, sizeof *B.anchored);
  yaml_parser_t p;
  int have_parser = 0;
  if (!B.doc || !B.open || !B.anchored || !(have_parser = yaml_parser_initialize(&p))) {
    rc = oom(&B);
  } else {
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
    rc = build(&B, &p);
  }
  if (!rc) rc = resolve_doc(file, B.doc, lim, err);
  if (have_parser) yaml_parser_delete(&p);
  free(B.open);
  free(B.anchored);
  if (rc) {
    sw_ydoc_free(B.doc);
    return rc;
  }
  *out = B.doc;
  return 0;
}

/* ---- resolving aliases and merge keys ----------------------------------------------------- */

static struct sw_ynode *deref(struct sw_ynode *n) {
  return n && n->kind == SW_YALIAS ? n->target : n;
}

/* The mappings a merge key's value names: the value itself, or each entry of a sequence. */
static size_t merge_sources(const struct sw_ynode *v) { return v && v->kind == SW_YSEQ ? v->n : 1; }

static struct sw_ynode *merge_source(struct sw_ynode *v, size_t j) {
  return v && v->kind == SW_YSEQ ? deref(v->items[j]) : v;
}

static int resolve_node(const char *file, struct sw_ynode *n, struct sw_err *err);

/* Appends to pairs[0, *np) the pairs of src whose keys are not there yet. */
static int merge_from(const char *file, const struct sw_ynode *key, struct sw_ynode *src,
                      struct sw_ypair **pairs, size_t *np, size_t *cap, struct sw_err *err) {
  if (!src || src->kind != SW_YMAP)
    return sw_err_set(err, SW_EINVAL,
                      "%s:%d:%d: YAML: a merge key '<<' takes a mapping or a sequence of mappings",
                      file, key->line, key->col);
  int rc = resolve_node(file, src, err);
  for (size_t i = 0; !rc && i < src->n; i++) {
    const struct sw_ypair *sp = &src->pairs[i];
    int have = 0;
    for (size_t j = 0; !have && j < *np; j++) have = same_text((*pairs)[j].key, sp->key);
    if (have) continue;
    if (grow((void **)pairs, cap, *np, sizeof **pairs)) return yaml_oom(file, err);
    (*pairs)[(*np)++] = *sp;
  }
  return rc;
}

static int resolve_node(const char *file, struct sw_ynode *n, struct sw_err *err) {
  if (!n || n->resolved) return 0;
  n->resolved = 1;
  int rc = 0;
  if (n->kind == SW_YSEQ) {
    for (size_t i = 0; !rc && i < n->n; i++) {
      n->items[i] = deref(n->items[i]);
      rc = resolve_node(file, n->items[i], err);
    }
    return rc;
  }
  if (n->kind != SW_YMAP) return 0;
  int merges = 0;
  for (size_t i = 0; !rc && i < n->n; i++) {
    struct sw_ypair *p = &n->pairs[i];
    p->key = deref(p->key);
    p->value = deref(p->value);
    if (is_merge_key(p->key)) {
      merges = 1;
      continue; /* its value is read by merge_from */
    }
    rc = resolve_node(file, p->key, err);
    if (!rc) rc = resolve_node(file, p->value, err);
  }
  if (rc || !merges) return rc;
  /* The mapping's own pairs, then what each merge key adds, in the order written. */
  struct sw_ypair *all = NULL;
  size_t na = 0, cap = 0;
  for (size_t i = 0; !rc && i < n->n; i++) {
    if (is_merge_key(n->pairs[i].key)) continue;
    if (grow((void **)&all, &cap, na, sizeof *all)) rc = yaml_oom(file, err);
    if (!rc) all[na++] = n->pairs[i];
  }
  for (size_t i = 0; !rc && i < n->n; i++) {
    struct sw_ypair *p = &n->pairs[i];
    if (!is_merge_key(p->key)) continue;
    for (size_t j = 0; !rc && j < merge_sources(p->value); j++)
      rc = merge_from(file, p->key, merge_source(p->value, j), &all, &na, &cap, err);
  }
  if (rc) {
    free(all);
    return rc;
  }
  free(n->pairs);
  n->pairs = all;
  n->n = na;
  n->cap = cap;
  return 0;
}

/* Before anything is resolved, a walk bounds the expansion: it visits the tree the way the
 * resolved one will be read (an alias stands for the node it names, a merge key adds the pairs of
 * the mappings it names) without copying anything, and stops at the first limit it passes, so its
 * cost is at most lim->nodes visits however large the expansion would have been. via is the
 * outermost alias on the current path (the one written in the text's own structure, where the user
 * looks). */
struct budget {
  const char *file;
  const struct sw_ylimits *lim;
  struct sw_err *err;
  size_t nodes;
  const struct sw_ynode *via;
};

static int budget_fail(struct budget *b, const struct sw_ynode *at, const char *what) {
  if (!b->via)
    return sw_err_set(b->err, SW_EINVAL, "%s:%d:%d: YAML: %s", b->file, at->line, at->col, what);
  return sw_err_set(b->err, SW_EINVAL, "%s:%d:%d: alias '*%.64s' expands the document: %s", b->file,
                    b->via->line, b->via->col, b->via->anchor, what);
}

/* Pairs a mapping holds once its merge keys are applied (an upper bound: keys it has already are
 * skipped then). hops bounds chains of merges. */
static size_t map_width(const struct sw_ynode *m, size_t hops, const struct sw_ylimits *lim) {
  size_t w = 0;
  for (size_t i = 0; i < m->n && w <= lim->nodes; i++) {
    if (!is_merge_key(m->pairs[i].key)) {
      w++;
      continue;
    }
    struct sw_ynode *v = deref(m->pairs[i].value);
    for (size_t j = 0; j < merge_sources(v); j++) {
      const struct sw_ynode *one = merge_source(v, j);
      if (one && one->kind == SW_YMAP)
        w += hops >= lim->depth ? lim->nodes + 1 : map_width(one, hops + 1, lim);
    }
  }
  return w;
}

static int budget_walk(struct budget *b, const struct sw_ynode *n, size_t depth) {
  if (!n) return 0;
  if (n->kind == SW_YALIAS) {
    const struct sw_ynode *outer = b->via;
    if (!outer) b->via = n;
    int rc = budget_walk(b, n->target, depth);
    b->via = outer;
    return rc;
  }
  char what[96];
  if (++b->nodes > b->lim->nodes) {
    snprintf(what, sizeof what, "more than %zu YAML nodes (the limit)", b->lim->nodes);
    return budget_fail(b, n, what);
  }
  if (n->kind == SW_YSCALAR) return 0;
  if (depth >= b->lim->depth) {
    snprintf(what, sizeof what, "nested deeper than %zu levels (the limit)", b->lim->depth);
    return budget_fail(b, n, what);
  }
  int rc = 0;
  if (n->kind == SW_YSEQ) {
    for (size_t i = 0; !rc && i < n->n; i++) rc = budget_walk(b, n->items[i], depth + 1);
    return rc;
  }
  const struct sw_ynode *merge = NULL;
  for (size_t i = 0; !rc && i < n->n; i++) {
    if (!merge && is_merge_key(n->pairs[i].key)) merge = n->pairs[i].key;
    rc = budget_walk(b, n->pairs[i].key, depth + 1);
    if (!rc) rc = budget_walk(b, n->pairs[i].value, depth + 1);
  }
  if (!rc && merge && map_width(n, 0, b->lim) > b->lim->map_keys) {
    snprintf(what, sizeof what, "a mapping of more than %zu keys after merge keys (the limit)",
             b->lim->map_keys);
    rc = budget_fail(b, merge, what);
  }
  return rc;
}

static int resolve_doc(const char *file, struct sw_ydoc *doc, const struct sw_ylimits *lim,
                       struct sw_err *err) {
  if (!doc->root) return 0;
  struct budget b = {file, lim, err, 0, NULL};
  int rc = budget_walk(&b, doc->root, 0);
  if (rc) return rc;
  doc->root = deref(doc->root);
  return resolve_node(file, doc->root, err);
}

/* sw_yaml: the project's one YAML reader (a sweep spec, a trainer config file), on libyaml's event
 * parser. It builds a small read-only tree under limits set by the caller, so that no text from
 * outside (a spec arrives over the wire) makes it spend more than the limits allow, and every error
 * it reports carries FILE:LINE:COLUMN.
 *
 * Why libyaml and not libfyaml (used until December 2026): the fuzzers found five defects in
 * Debian 12's libfyaml 0.7.12 on short texts (an endless loop on a bad UTF-8 byte in a directive,
 * buffers lost on CR LF breaks and on runs of escaped quotes, a heap use-after-free in its simple
 * key list, an assertion on a double-quoted scalar ending in a backslash; the last two crashed the
 * config fuzzer in CI), each guarded in front of it by hand. libyaml is YAML's reference C parser,
 * fuzzed continuously by OSS-Fuzz; its event parser keeps no tree and no anchors, so everything
 * that grows with the text is built here, under the limits. */
#ifndef SW_YAML_H
#define SW_YAML_H
#include <stddef.h>

#include "sw_err.h"

enum sw_ykind { SW_YSCALAR, SW_YSEQ, SW_YMAP, SW_YALIAS };

struct sw_ypair;

/* One node. Positions are 1-based and point where the user wrote the node: a scalar's first
 * character (a quoted one's opening quote), a collection's bracket or first entry, an alias's
 * '*'. In a loaded document no alias is left in any sequence or mapping (each stands for the node
 * it names, shared, not copied) and merge keys are applied. */
struct sw_ynode {
  enum sw_ykind kind;
  int line, col;
  int plain;               /* a scalar written plain (no quotes, no block indicator) */
  char *text;              /* a scalar's value, NUL-terminated (may hold NULs from "\0" escapes) */
  size_t len;              /* its length in bytes */
  char *anchor;            /* the node's anchor name (&name), or NULL; an alias: the name it uses */
  struct sw_ynode *target; /* an alias: the anchored node it names */
  struct sw_ynode **items; /* a sequence's entries */
  struct sw_ypair *pairs;  /* a mapping's pairs, in the order written */
  size_t n;                /* entries of a sequence, pairs of a mapping */
  size_t cap;
  int resolved; /* aliases and merge keys resolved (while loading) */
};

struct sw_ypair {
  struct sw_ynode *key, *value;
};

/* What a text may hold. Each is checked while it is parsed, before more is built: nodes (scalars,
 * aliases, collections), the nesting depth of collections, the keys of one mapping, anchors. */
struct sw_ylimits {
  size_t nodes, depth, map_keys, anchors;
};

struct sw_ydoc {
  struct sw_ynode *root; /* NULL when the text holds no node (empty, only comments) */
  struct sw_ynode **all; /* every node, for sw_ydoc_free */
  size_t n_all, cap_all;
};

/* Parses text[0, len) as one YAML document into *out (free it with sw_ydoc_free). Refused, with
 * SW_EINVAL and "FILE:LINE:COL: ...": text that is not UTF-8, a syntax error, a second document, a
 * limit passed, a mapping with a key twice (two scalar keys with the same text), an alias that
 * names no anchor before it (so no node holds itself), a `<<` whose value is not a mapping or a
 * sequence of mappings. SW_ENOMEM when memory runs out.
 *
 * Aliases and merge keys (`<<: *base`, `<<: [*a, *b]`: the named mappings' pairs whose keys the
 * mapping does not have itself, the first named winning, after the mapping's own pairs, as YAML
 * 1.1's merge type says) are resolved once the tree is built. First what they expand to is bounded
 * by lim without building anything (a "billion laughs" text is refused at the alias whose expansion
 * passes a limit: "FILE:L:C: alias '*a' expands the document: ..."); shared nodes are then read
 * through, not copied. */
int sw_yaml_load(const char *file, const char *text, size_t len, const struct sw_ylimits *lim,
                 struct sw_ydoc **out, struct sw_err *err);

void sw_ydoc_free(struct sw_ydoc *doc);

/* Offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or n when the text is UTF-8. */
size_t sw_yaml_utf8_bad_at(const unsigned char *s, size_t n);

/* 0 when yaml[0, len) is UTF-8 text; else SW_EINVAL, "FILE:LINE:COL: not UTF-8 text (byte 0xNN)"
 * at the first bad byte (columns count characters). */
int sw_yaml_utf8_check(const char *file, const char *yaml, size_t len, struct sw_err *err);

#endif

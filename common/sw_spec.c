/* sw_spec.c: the sweep spec loader (YAML -> struct sw_spec): strict key checking, types,
 * ranges and defaults. docs/spec.md documents every key this file accepts; what is derived
 * from a loaded spec (resolved configs, grid expansion, JSON) lives in sw_spec_view.c.
 *
 * Parsing is sw_yaml's (libyaml's event parser, a tree built under limits). Every error names
 * FILE:LINE:COLUMN (1-based): scalars carry their own position; a mapping or sequence is located
 * by the key that introduces it, so "missing key" errors point at the section that lacks it.
 * Syntax errors are libyaml's, at the problem it found. */
#include "sw_spec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_fs.h"
#include "sw_gate.h"
#include "sw_yaml.h"

/* Limits on hostile input (docs/spec.md "Limits"). The text is bounded first (the control
 * endpoint refuses a longer spec_yaml too). sw_yaml_load checks the nodes, the nesting, the width
 * of every mapping as written and the anchors while it parses, and refuses a second document;
 * then it bounds what aliases and merge keys expand to with the same numbers before anything is
 * read through them, so an alias bomb ("billion laughs") is refused after at most
 * SPEC_NODES_MAX visits instead of being expanded. The mapping width bounds the duplicate-key
 * checks (every key of a mapping against every other); aliases look their anchor up by a linear
 * search, so the anchors are bounded too (a spec needs a handful). */
#define SPEC_YAML_MAX SW_MSG_YAML_MAX
#define SPEC_NODES_MAX 100000
#define SPEC_DEPTH_MAX 64
#define SPEC_MAP_KEYS_MAX 256
#define SPEC_ANCHORS_MAX 64
#define CONFIG_KEYS_MAX 256
#define TEXT_MAX 4096

/* A node plus the key that introduced it (NULL for the root), for error positions. */
struct yn {
  struct sw_ynode *n;
  struct sw_ynode *key;
  const char *path; /* dotted path for messages, e.g. "gate.rule" */
};

static struct sw_ynode *seq_next(const struct sw_ynode *s, size_t *it) {
  return *it < s->n ? s->items[(*it)++] : NULL;
}

static struct sw_ypair *map_next(const struct sw_ynode *m, size_t *it) {
  return *it < m->n ? &m->pairs[(*it)++] : NULL;
}

struct loader {
  const char *file;
  struct sw_err *err;
  struct sw_spec *s;
};

/* ---- positions and errors ------------------------------------------------------------ */

/* Position of a node: its own when it is a scalar, else that of the key introducing it (1:1 for
 * the top level). */
static void yn_pos(const struct yn *y, int *line, int *col) {
  const struct sw_ynode *n = y->n && y->n->kind == SW_YSCALAR ? y->n : y->key;
  *line = n ? n->line : 1, *col = n ? n->col : 1;
}

static int failv(struct loader *L, int line, int col, const char *fmt, va_list ap) {
  char msg[SW_ERR_MSG_MAX];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return sw_err_set(L->err, SW_EINVAL, "%s:%d:%d: %s", L->file, line, col, msg);
}

static int fail(struct loader *L, const struct yn *y, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct loader *L, const struct yn *y, const char *fmt, ...) {
  int line, col;
  yn_pos(y, &line, &col);
  va_list ap;
  va_start(ap, fmt);
  failv(L, line, col, fmt, ap);
  va_end(ap);
  return SW_EINVAL;
}

static int oom(struct loader *L) {
  return sw_err_set(L->err, SW_ENOMEM, "%s: out of memory", L->file);
}

/* ---- scalar access ------------------------------------------------------------------- */

/* The scalar text of a node as a new NUL-terminated string, or NULL when not a scalar. */
static char *scalar_dup(const struct sw_ynode *n) {
  return n && n->kind == SW_YSCALAR ? strdup(n->text) : NULL;
}

static const char *type_word(struct sw_ynode *n) {
  if (!n) return "nothing";
  if (n->kind == SW_YMAP) return "a mapping";
  if (n->kind == SW_YSEQ) return "a sequence";
  return "a scalar";
}

/* YAML 1.2 core schema forms used here: null, booleans, integers, floats. */
static int is_null_text(const char *s) {
  return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int bool_text(const char *s, bool *out) {
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return *out = true, 1;
  if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return *out = false, 1;
  return 0;
}

static int int_text(const char *s, long long *out) {
  const char *p = s;
  if (*p == '+' || *p == '-') p++;
  if (!isdigit((unsigned char)*p)) return 0;
  for (const char *q = p; *q; q++)
    if (!isdigit((unsigned char)*q)) return 0;
  errno = 0;
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  if (errno || *end) return 0;
  *out = v;
  return 1;
}

static int real_text(const char *s, double *out) {
  /* strtod alone also takes "inf", "nan" and hex floats; a spec number is decimal and finite. */
  for (const char *q = s; *q; q++)
    if (!(isdigit((unsigned char)*q) || strchr("+-.eE", *q))) return 0;
  if (!*s) return 0;
  errno = 0;
  char *end = NULL;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v)) return 0;
  *out = v;
  return 1;
}

static int want_scalar(struct loader *L, const struct yn *y, const char *what) {
  if (!y->n || y->n->kind != SW_YSCALAR)
    return fail(L, y, "%s: expected %s, got %s", y->path, what, type_word(y->n));
  return 0;
}

static int get_str(struct loader *L, const struct yn *y, size_t max, int allow_empty, char **out) {
  int rc = want_scalar(L, y, "a string");
  if (rc) return rc;
  char *s = scalar_dup(y->n);
  if (!s) return oom(L);
  if (y->n->plain && is_null_text(s)) {
    if (!allow_empty) {
      free(s);
      return fail(L, y, "%s: expected a string, got null", y->path);
    }
    s[0] = 0; /* `description: ~` is an empty text, not the text "~" */
  }
  if (strlen(s) > max) {
    free(s);
    return fail(L, y, "%s: longer than %zu bytes", y->path, max);
  }
  free(*out);
  *out = s;
  return 0;
}

static int get_real(struct loader *L, const struct yn *y, double lo, double hi, double *out) {
  int rc = want_scalar(L, y, "a number");
  if (rc) return rc;
  char *s = scalar_dup(y->n);
  if (!s) return oom(L);
  double v;
  int ok = y->n->plain && real_text(s, &v);
  free(s);
  if (!ok) return fail(L, y, "%s: expected a number", y->path);
  if (v < lo || v > hi) return fail(L, y, "%s: %g out of range [%g, %g]", y->path, v, lo, hi);
  *out = v;
  return 0;
}

static int get_int(struct loader *L, const struct yn *y, long long lo, long long hi,
                   long long *out) {
  int rc = want_scalar(L, y, "an integer");
  if (rc) return rc;
  char *s = scalar_dup(y->n);
  if (!s) return oom(L);
  long long v;
  int ok = y->n->plain && int_text(s, &v);
  free(s);
  if (!ok) return fail(L, y, "%s: expected an integer", y->path);
  if (v < lo || v > hi) return fail(L, y, "%s: %lld out of range [%lld, %lld]", y->path, v, lo, hi);
  *out = v;
  return 0;
}

static int get_u32(struct loader *L, const struct yn *y, long long lo, long long hi,
                   uint32_t *out) {
  long long v;
  int rc = get_int(L, y, lo, hi, &v);
  if (!rc) *out = (uint32_t)v;
  return rc;
}

static int get_bool(struct loader *L, const struct yn *y, bool *out) {
  int rc = want_scalar(L, y, "true or false");
  if (rc) return rc;
  char *s = scalar_dup(y->n);
  if (!s) return oom(L);
  int ok = y->n->plain && bool_text(s, out);
  free(s);
  if (!ok) return fail(L, y, "%s: expected true or false", y->path);
  return 0;
}

/* One of names[] (NULL-terminated); *out gets its index. */
static int get_enum(struct loader *L, const struct yn *y, const char *const *names, int *out) {
  int rc = want_scalar(L, y, "a name");
  if (rc) return rc;
  char *s = scalar_dup(y->n);
  if (!s) return oom(L);
  for (int i = 0; names[i]; i++) {
    if (!strcmp(s, names[i])) {
      free(s);
      *out = i;
      return 0;
    }
  }
  char allowed[256] = "";
  for (int i = 0; names[i]; i++) {
    strncat(allowed, i ? " | " : "", sizeof allowed - strlen(allowed) - 1);
    strncat(allowed, names[i], sizeof allowed - strlen(allowed) - 1);
  }
  fail(L, y, "%s: '%s' is not one of %s", y->path, s, allowed);
  free(s);
  return SW_EINVAL;
}

/* ---- mappings ------------------------------------------------------------------------ */

/* Child of a mapping for one pair, with its dotted path built into buf. */
static struct yn child(const struct yn *parent, struct sw_ypair *p, char *buf, size_t cap,
                       const char *key) {
  if (parent->path && *parent->path)
    snprintf(buf, cap, "%s.%s", parent->path, key);
  else
    snprintf(buf, cap, "%s", key);
  return (struct yn){p->value, p->key, buf};
}

static int want_map(struct loader *L, const struct yn *y) {
  if (!y->n || y->n->kind != SW_YMAP)
    return fail(L, y, "%s: expected a mapping, got %s", *y->path ? y->path : "spec",
                type_word(y->n));
  return 0;
}

/* The key of a pair as text (keys must be plain scalars). */
static int pair_key(struct loader *L, const struct yn *parent, struct sw_ypair *p, char *buf,
                    size_t cap) {
  struct sw_ynode *k = p->key;
  struct yn ky = {k, k, parent->path};
  if (!k || k->kind != SW_YSCALAR) return fail(L, &ky, "%s: keys must be scalars", parent->path);
  size_t len = 0;
  const char *s = k->text;
  len = k->len;
  if (len == 0 || len >= cap) return fail(L, &ky, "%s: bad key", parent->path);
  memcpy(buf, s, len);
  buf[len] = 0;
  return 0;
}

static int unknown_key(struct loader *L, struct sw_ypair *p, const struct yn *parent,
                       const char *key, const char *allowed) {
  struct yn ky = {p->key, p->key, parent->path};
  return fail(L, &ky, "unknown key '%s' in %s (allowed: %s)", key,
              *parent->path ? parent->path : "spec", allowed);
}

static int missing_key(struct loader *L, const struct yn *y, const char *key) {
  return fail(L, y, "missing required key '%s' in %s", key, *y->path ? y->path : "spec");
}

/* Iterates the pairs of a mapping: for (FOR_PAIRS(...)) with p the pair and k its key text. */
#define FOR_PAIRS(L, y, p, k, rc)                                                                  \
  size_t p##_it = 0;                                                                               \
  struct sw_ypair *p;                                                                              \
  char k[128];                                                                                     \
  while (!(rc) && (p = map_next((y)->n, &p##_it)) != NULL &&                                       \
         !((rc) = pair_key((L), (y), p, k, sizeof k)))

/* ---- trainer config lists ------------------------------------------------------------ */

/* A YAML scalar as a typed JSON value and its `--set` text. Quoted scalars are strings;
 * plain ones are booleans, integers, reals or strings by the YAML 1.2 core schema; null is
 * refused because a trainer key always needs a value. */
static int scalar_value(struct loader *L, const struct yn *y, json_t **value, char **text) {
  int rc = want_scalar(L, y, "a scalar (trainer config values are scalars)");
  if (rc) return rc;
  char *s = scalar_dup(y->n);
  if (!s) return oom(L);
  if (strlen(s) > TEXT_MAX) {
    free(s);
    return fail(L, y, "%s: longer than %d bytes", y->path, TEXT_MAX);
  }
  bool b;
  long long i;
  double d;
  json_t *v;
  if (!y->n->plain) {
    v = json_string(s);
    if (!v) {
      free(s);
      return fail(L, y, "%s: not UTF-8 text", y->path);
    }
  } else if (is_null_text(s)) {
    free(s);
    return fail(L, y, "%s: needs a value, got null", y->path);
  } else if (bool_text(s, &b)) {
    v = json_boolean(b);
    free(s);
    s = strdup(b ? "true" : "false");
  } else if (int_text(s, &i)) {
    v = json_integer(i);
  } else if (real_text(s, &d)) {
    v = json_real(d);
  } else {
    v = json_string(s);
  }
  if (!v || !s) {
    json_decref(v);
    free(s);
    return oom(L);
  }
  *value = v;
  *text = s;
  return 0;
}

static int config_key_ok(const char *k) {
  if (!*k) return 0;
  for (const char *p = k; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-')) return 0;
  return 1;
}

/* A mapping of trainer keys to scalars, in order; `skip` names keys handled elsewhere. */
static int load_config(struct loader *L, const struct yn *y, struct sw_spec_config *cfg,
                       const char *skip) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    if (skip && !strcmp(k, skip)) continue;
    struct yn v = child(y, p, path, sizeof path, k);
    struct yn ky = {p->key, p->key, y->path};
    if (!config_key_ok(k))
      return fail(L, &ky, "%s: '%s' is not a config key (letters, digits, _ . -)", y->path, k);
    if (sw_spec_config_get(cfg, k)) return fail(L, &ky, "%s: duplicate key '%s'", y->path, k);
    if (cfg->n >= CONFIG_KEYS_MAX)
      return fail(L, &ky, "%s: more than %d keys", y->path, CONFIG_KEYS_MAX);
    json_t *val = NULL;
    char *text = NULL;
    rc = scalar_value(L, &v, &val, &text);
    if (rc) return rc;
    rc = sw_spec_config_set(cfg, k, val, text);
    json_decref(val);
    free(text);
    if (rc) return oom(L);
  }
  return rc;
}

/* ---- sections ------------------------------------------------------------------------ */

static int load_builtin(struct loader *L, const struct yn *y, struct sw_spec_trainer *t) {
  t->kind = SW_TRAINER_BUILTIN;
  if (!y->n || (y->n->kind == SW_YSCALAR && y->n->plain)) {
    /* `builtin:` with no value means "all defaults". */
    char *s = scalar_dup(y->n);
    int empty = !y->n || (s && is_null_text(s));
    free(s);
    if (empty) return 0;
  }
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    if (!strcmp(k, "device")) {
      struct yn v = child(y, p, path, sizeof path, k);
      rc = get_str(L, &v, SW_MSG_NAME_MAX, 0, &t->device);
    }
  }
  if (!rc) rc = load_config(L, y, &t->options, "device");
  return rc;
}

static int json_pointer_ok(const char *s) { return *s == 0 || *s == '/'; }

static int load_exec(struct loader *L, const struct yn *y, struct sw_spec_trainer *t) {
  t->kind = SW_TRAINER_EXEC;
  int rc = want_map(L, y);
  if (rc) return rc;
  int have_command = 0;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    if (!strcmp(k, "command")) {
      have_command = 1;
      if (!v.n || v.n->kind != SW_YSEQ || (int)v.n->n < 1)
        return fail(L, &v, "%s: expected a non-empty sequence of strings", v.path);
      int n = (int)v.n->n;
      if (n > 256) return fail(L, &v, "%s: more than 256 arguments", v.path);
      t->command = calloc((size_t)n, sizeof *t->command);
      if (!t->command) return oom(L);
      size_t it = 0;
      struct sw_ynode *e;
      char epath[300];
      while (!rc && (e = seq_next(v.n, &it)) != NULL) {
        snprintf(epath, sizeof epath, "%s[%zu]", v.path, t->n_command);
        struct yn ey = {e, v.key, epath};
        rc = get_str(L, &ey, TEXT_MAX, 0, &t->command[t->n_command]);
        if (!rc) t->n_command++;
      }
    } else if (!strcmp(k, "result")) {
      rc = get_str(L, &v, TEXT_MAX, 0, &t->result);
    } else if (!strcmp(k, "env")) {
      rc = load_config(L, &v, &t->env, NULL);
    } else if (!strcmp(k, "timeout_s")) {
      rc = get_real(L, &v, 0, 1e7, &t->timeout_s);
    } else if (!strcmp(k, "map")) {
      rc = want_map(L, &v);
      char mpath[300];
      FOR_PAIRS(L, &v, mp, mk, rc) {
        struct yn mv = child(&v, mp, mpath, sizeof mpath, mk);
        char *ptr = NULL;
        rc = get_str(L, &mv, TEXT_MAX, 1, &ptr);
        if (rc) break;
        if (!json_pointer_ok(ptr)) {
          fail(L, &mv, "%s: '%s' is not a JSON pointer (starts with '/')", mv.path, ptr);
          free(ptr);
          return SW_EINVAL;
        }
        struct sw_spec_metric_map *grown = realloc(t->map, (t->n_map + 1) * sizeof *grown);
        char *metric = strdup(mk);
        if (!grown || !metric) {
          free(ptr);
          free(metric);
          if (grown) t->map = grown;
          return oom(L);
        }
        t->map = grown;
        t->map[t->n_map].metric = metric;
        t->map[t->n_map].pointer = ptr;
        t->n_map++;
      }
    } else {
      return unknown_key(L, p, y, k, "command, result, env, timeout_s, map");
    }
  }
  if (!rc && !have_command) return missing_key(L, y, "command");
  if (!rc && !t->result && !(t->result = strdup("{out}/result.json"))) return oom(L);
  return rc;
}

static int load_trainer(struct loader *L, const struct yn *y, struct sw_spec_trainer *t) {
  int rc = want_map(L, y);
  if (rc) return rc;
  int n = 0;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    if (!strcmp(k, "builtin") || !strcmp(k, "exec")) {
      if (n++) {
        struct yn ky = {p->key, p->key, ""};
        return fail(L, &ky, "trainer: give exactly one of builtin and exec");
      }
      rc = !strcmp(k, "builtin") ? load_builtin(L, &v, t) : load_exec(L, &v, t);
    } else {
      return unknown_key(L, p, y, k, "builtin, exec");
    }
  }
  if (!rc && n == 0) return fail(L, y, "trainer: give one of builtin and exec");
  return rc;
}

static int hex64_ok(const char *s) {
  if (strlen(s) != 64) return 0;
  for (const char *p = s; *p; p++)
    if (!isxdigit((unsigned char)*p)) return 0;
  return 1;
}

static int load_generate(struct loader *L, const struct yn *y, struct sw_spec_scene *sc) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    long long seed;
    if (!strcmp(k, "kind"))
      rc = get_str(L, &v, SW_MSG_ID_MAX, 0, &sc->gen_kind);
    else if (!strcmp(k, "train_views"))
      rc = get_u32(L, &v, 1, 10000, &sc->train_views);
    else if (!strcmp(k, "test_views"))
      rc = get_u32(L, &v, 0, 10000, &sc->test_views);
    else if (!strcmp(k, "resolution"))
      rc = get_u32(L, &v, 8, 8192, &sc->resolution);
    else if (!strcmp(k, "seed")) {
      rc = get_int(L, &v, 0, INT64_MAX, &seed);
      if (!rc) sc->seed = (uint64_t)seed;
    } else
      return unknown_key(L, p, y, k, "kind, train_views, test_views, resolution, seed");
  }
  return rc;
}

static int load_scene(struct loader *L, const struct yn *y, struct sw_spec_scene *sc) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  struct yn sha_y = {0};
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    struct yn ky = {p->key, p->key, ""};
    if (!strcmp(k, "sha256")) {
      char *h = NULL;
      rc = get_str(L, &v, 64, 0, &h);
      if (rc) break;
      if (!hex64_ok(h)) {
        free(h);
        return fail(L, &v, "scene.sha256: expected 64 hex digits");
      }
      for (int i = 0; i < 64; i++) sc->sha256[i] = (char)tolower((unsigned char)h[i]);
      sc->sha256[64] = 0;
      free(h);
      sha_y = ky;
      continue;
    }
    if (!strcmp(k, "generate") || !strcmp(k, "path") || !strcmp(k, "url")) {
      if (sc->kind != SW_SCENE_NONE)
        return fail(L, &ky, "scene: give exactly one of generate, path and url");
    }
    if (!strcmp(k, "generate")) {
      sc->kind = SW_SCENE_GENERATE;
      rc = load_generate(L, &v, sc);
    } else if (!strcmp(k, "path")) {
      sc->kind = SW_SCENE_PATH;
      rc = get_str(L, &v, TEXT_MAX, 0, &sc->path);
    } else if (!strcmp(k, "url")) {
      sc->kind = SW_SCENE_URL;
      rc = get_str(L, &v, TEXT_MAX, 0, &sc->url);
      if (!rc && strncmp(sc->url, "http://", 7) && strncmp(sc->url, "https://", 8) &&
          strncmp(sc->url, "file://", 7))
        return fail(L, &v, "scene.url: expected an http://, https:// or file:// URL");
    } else {
      return unknown_key(L, p, y, k, "generate, path, url, sha256");
    }
  }
  if (rc) return rc;
  if (sc->kind == SW_SCENE_NONE) return fail(L, y, "scene: give one of generate, path and url");
  if (sc->kind == SW_SCENE_URL && !sc->sha256[0])
    return fail(L, y, "scene: url needs sha256 (the download is verified)");
  if (sc->kind != SW_SCENE_URL && sc->sha256[0])
    return fail(L, &sha_y, "scene: sha256 belongs with url");
  return 0;
}

static const char *const order_names[] = {"alternate", "fixed", "random", NULL};
static const char *const direction_names[] = {"lower", "higher", NULL};

const char *sw_spec_order_name(enum sw_spec_order o) {
  return (int)o >= 0 && o <= SW_ORDER_RANDOM ? order_names[o] : "?";
}

const char *sw_spec_direction_name(enum sw_spec_direction d) {
  return (int)d >= 0 && d <= SW_DIR_HIGHER ? direction_names[d] : "?";
}

static int load_pairs(struct loader *L, const struct yn *y, struct sw_spec_pairs *pr,
                      int *max_given) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256], max_path[256];
  struct yn max_y = {0};
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    long long seed;
    int e;
    if (!strcmp(k, "n"))
      rc = get_u32(L, &v, 1, SW_SPEC_PAIRS_MAX, &pr->n);
    else if (!strcmp(k, "max")) {
      rc = get_u32(L, &v, 1, SW_SPEC_PAIRS_MAX, &pr->max);
      *max_given = 1;
      snprintf(max_path, sizeof max_path, "%s", v.path);
      max_y = (struct yn){v.n, v.key, max_path};
    } else if (!strcmp(k, "order")) {
      rc = get_enum(L, &v, order_names, &e);
      if (!rc) pr->order = (enum sw_spec_order)e;
    } else if (!strcmp(k, "seed")) {
      rc = get_int(L, &v, 0, INT64_MAX, &seed);
      if (!rc) pr->seed = (uint64_t)seed;
    } else if (!strcmp(k, "sequential"))
      rc = get_bool(L, &v, &pr->sequential);
    else
      return unknown_key(L, p, y, k, "n, max, order, seed, sequential");
  }
  /* Checked after the loop: n may come after max in the mapping. */
  if (!rc && *max_given && pr->max < pr->n)
    return fail(L, &max_y, "pairs.max: %u is less than pairs.n %u", pr->max, pr->n);
  return rc;
}

static const char *const match_fields[] = {
    "hostname",   "os",      "arch",     "cpu_model", "cores",          "mem_bytes", "gpu_name",
    "gpu_driver", "gpu_api", "gpu_kind", "worker_id", "trainer_sha256", NULL};

static int match_key_ok(const char *k) {
  if (!strncmp(k, "label.", 6)) return k[6] != 0;
  for (int i = 0; match_fields[i]; i++)
    if (!strcmp(k, match_fields[i])) return 1;
  return 0;
}

static int load_placement(struct loader *L, const struct yn *y, struct sw_spec_placement *pl) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    if (!strcmp(k, "spread"))
      rc = get_bool(L, &v, &pl->spread);
    else if (!strcmp(k, "pin"))
      rc = get_str(L, &v, SW_MSG_ID_MAX, 0, &pl->pin);
    else if (!strcmp(k, "match")) {
      rc = want_map(L, &v);
      char mpath[300];
      FOR_PAIRS(L, &v, mp, mk, rc) {
        struct yn mv = child(&v, mp, mpath, sizeof mpath, mk);
        if (!match_key_ok(mk)) {
          struct yn ky = {mp->key, mp->key, ""};
          return fail(L, &ky,
                      "placement.match: unknown field '%s' (a fingerprint field or label.NAME)",
                      mk);
        }
        char *glob = NULL;
        rc = get_str(L, &mv, SW_MSG_VALUE_MAX, 0, &glob);
        if (rc) break;
        struct sw_spec_match *grown = realloc(pl->match, (pl->n_match + 1) * sizeof *grown);
        char *key = strdup(mk);
        if (!grown || !key) {
          free(glob);
          free(key);
          if (grown) pl->match = grown;
          return oom(L);
        }
        pl->match = grown;
        pl->match[pl->n_match].key = key;
        pl->match[pl->n_match].glob = glob;
        pl->n_match++;
      }
    } else
      return unknown_key(L, p, y, k, "spread, match, pin");
  }
  return rc;
}

static int load_band(struct loader *L, const struct yn *y, struct sw_spec_guard *g) {
  if (!y->n || y->n->kind != SW_YSEQ || (int)y->n->n != 2)
    return fail(L, y, "%s: expected [low, high]", y->path);
  struct yn lo = {y->n->items[0], y->key, y->path};
  struct yn hi = {y->n->items[1], y->key, y->path};
  int rc = get_real(L, &lo, -1e300, 1e300, &g->band_lo);
  if (!rc) rc = get_real(L, &hi, -1e300, 1e300, &g->band_hi);
  if (!rc && !(g->band_lo < g->band_hi))
    return fail(L, &hi, "%s: low %g must be below high %g", y->path, g->band_lo, g->band_hi);
  g->has_band = true;
  return rc;
}

/* A metric name becomes part of a JSON path in the store's queries ('$.metrics.' || name): it
 * is kept to identifier characters. */
static int metric_name_ok(const char *s) {
  if (!*s) return 0;
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
  return 1;
}

static int get_metric(struct loader *L, const struct yn *y, char **out) {
  int rc = get_str(L, y, SW_SPEC_METRIC_MAX, 0, out);
  if (!rc && !metric_name_ok(*out))
    return fail(L, y, "%s: '%s' is not a metric name", y->path, *out);
  return rc;
}

static int load_gate(struct loader *L, const struct yn *y, struct sw_spec_gate *g) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256], sub[300];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    int e;
    if (!strcmp(k, "metric"))
      rc = get_metric(L, &v, &g->metric);
    else if (!strcmp(k, "direction")) {
      rc = get_enum(L, &v, direction_names, &e);
      if (!rc) g->direction = (enum sw_spec_direction)e;
    } else if (!strcmp(k, "alpha"))
      rc = get_real(L, &v, 1e-6, 0.5, &g->alpha);
    else if (!strcmp(k, "size_tolerance"))
      rc = get_real(L, &v, 0, 0.99, &g->size_tolerance);
    else if (!strcmp(k, "rule")) {
      rc = want_map(L, &v);
      FOR_PAIRS(L, &v, rp, rk, rc) {
        struct yn rv = child(&v, rp, sub, sizeof sub, rk);
        if (!strcmp(rk, "k"))
          rc = get_real(L, &rv, 0, 100, &g->k);
        else if (!strcmp(rk, "floor"))
          rc = get_real(L, &rv, 0, 1, &g->floor);
        else
          return unknown_key(L, rp, &v, rk, "k, floor");
      }
    } else if (!strcmp(k, "guard")) {
      rc = want_map(L, &v);
      FOR_PAIRS(L, &v, gp, gk, rc) {
        struct yn gv = child(&v, gp, sub, sizeof sub, gk);
        if (!strcmp(gk, "metric"))
          rc = get_metric(L, &gv, &g->guard.metric);
        else if (!strcmp(gk, "max_drop"))
          rc = get_real(L, &gv, 0, 1e300, &g->guard.max_drop);
        else if (!strcmp(gk, "band"))
          rc = load_band(L, &gv, &g->guard);
        else
          return unknown_key(L, gp, &v, gk, "metric, max_drop, band");
      }
    } else
      return unknown_key(L, p, y, k, "metric, direction, rule, guard, alpha, size_tolerance");
  }
  return rc;
}

/* Ranges: a limit of cores or seconds is >= 0 (0 for a limit makes every sample count); the
 * sampler period has a floor because a faster sampler costs the trainer CPU time. */
static int load_contamination(struct loader *L, const struct yn *y,
                              struct sw_spec_contamination *c) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    if (!strcmp(k, "load1_max"))
      rc = get_real(L, &v, 0, 1e6, &c->load1_max);
    else if (!strcmp(k, "cpu_other_max"))
      rc = get_real(L, &v, 0, 1e6, &c->cpu_other_max);
    else if (!strcmp(k, "cpu_other_mean_max"))
      rc = get_real(L, &v, 0, 1e6, &c->cpu_other_mean_max);
    else if (!strcmp(k, "over_max_s"))
      rc = get_real(L, &v, 0, 86400, &c->over_max_s);
    else if (!strcmp(k, "settle_s"))
      rc = get_real(L, &v, 0, 86400, &c->settle_s);
    else if (!strcmp(k, "max_wait_s"))
      rc = get_real(L, &v, 0, 86400 * 7, &c->max_wait_s);
    else if (!strcmp(k, "sample_interval_s"))
      rc = get_real(L, &v, 0.01, 3600, &c->sample_interval_s);
    else if (!strcmp(k, "gpu_foreign"))
      rc = get_bool(L, &v, &c->gpu_foreign);
    else if (!strcmp(k, "shared_host"))
      rc = get_bool(L, &v, &c->shared_host);
    else if (!strcmp(k, "require_windows"))
      rc = get_bool(L, &v, &c->require_windows);
    else if (!strcmp(k, "rerun_once"))
      rc = get_bool(L, &v, &c->rerun_once);
    else
      return unknown_key(L, p, y, k,
                         "load1_max, cpu_other_max, cpu_other_mean_max, over_max_s, settle_s, "
                         "max_wait_s, sample_interval_s, gpu_foreign, shared_host, "
                         "require_windows, rerun_once");
  }
  if (!rc && c->max_wait_s < c->settle_s)
    return fail(L, y, "contamination: max_wait_s %g is less than settle_s %g", c->max_wait_s,
                c->settle_s);
  return rc;
}

#define WEBHOOK_MAX 2000

static int load_notify(struct loader *L, const struct yn *y, struct sw_spec_notify *n) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    if (!strcmp(k, "webhook")) {
      free(n->webhook);
      n->webhook = NULL;
      rc = get_str(L, &v, WEBHOOK_MAX, 0, &n->webhook);
      if (!rc && strncmp(n->webhook, "http://", 7) && strncmp(n->webhook, "https://", 8))
        return fail(L, &v, "notify.webhook: '%s' is not an http:// or https:// URL", n->webhook);
      for (const char *c = n->webhook; !rc && *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
          return fail(L, &v, "notify.webhook: the URL holds a space or control character");
    } else
      return unknown_key(L, p, y, k, "webhook");
  }
  return rc;
}

static int load_artifacts(struct loader *L, const struct yn *y, struct sw_spec_artifacts *a) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    if (!strcmp(k, "upload"))
      rc = get_bool(L, &v, &a->upload);
    else if (!strcmp(k, "final_ply"))
      rc = get_bool(L, &v, &a->final_ply);
    else if (!strcmp(k, "max_file_mb"))
      rc = get_u32(L, &v, 1, 65536, &a->max_file_mb);
    else if (!strcmp(k, "keep_sweeps"))
      rc = get_u32(L, &v, 0, 100000, &a->keep_sweeps);
    else if (!strcmp(k, "keep_days"))
      rc = get_real(L, &v, 0, 36500, &a->keep_days);
    else
      return unknown_key(L, p, y, k, "upload, final_ply, max_file_mb, keep_sweeps, keep_days");
  }
  return rc;
}

static int load_arms(struct loader *L, const struct yn *y, struct sw_spec *s) {
  int rc = want_map(L, y);
  if (rc) return rc;
  int have_off = 0, have_on = 0;
  char path[256];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    if (!strcmp(k, "off")) {
      have_off = 1;
      rc = load_config(L, &v, &s->arm_off, NULL);
    } else if (!strcmp(k, "on")) {
      have_on = 1;
      rc = load_config(L, &v, &s->arm_on, NULL);
    } else
      return unknown_key(L, p, y, k, "off, on");
  }
  if (rc) return rc;
  if (!have_off) return missing_key(L, y, "off");
  if (!have_on) return missing_key(L, y, "on");
  return 0;
}

static int load_parameters(struct loader *L, const struct yn *y, struct sw_spec *s) {
  int rc = want_map(L, y);
  if (rc) return rc;
  char path[256], epath[300];
  FOR_PAIRS(L, y, p, k, rc) {
    struct yn v = child(y, p, path, sizeof path, k);
    struct yn ky = {p->key, p->key, ""};
    if (!config_key_ok(k)) return fail(L, &ky, "parameters: '%s' is not a config key", k);
    if (!v.n || v.n->kind != SW_YSEQ || (int)v.n->n < 1)
      return fail(L, &v, "%s: expected a non-empty sequence of values", v.path);
    int n = (int)v.n->n;
    if (n > SW_SPEC_PARAM_VALUES_MAX)
      return fail(L, &v, "%s: more than %d values", v.path, SW_SPEC_PARAM_VALUES_MAX);
    struct sw_spec_param *grown = realloc(s->params, (s->n_params + 1) * sizeof *grown);
    if (!grown) return oom(L);
    s->params = grown;
    struct sw_spec_param *prm = &grown[s->n_params];
    memset(prm, 0, sizeof *prm);
    s->n_params++;
    prm->key = strdup(k);
    prm->values = calloc((size_t)n, sizeof *prm->values);
    if (!prm->key || !prm->values) return oom(L);
    size_t it = 0;
    struct sw_ynode *e;
    while (!rc && (e = seq_next(v.n, &it)) != NULL) {
      snprintf(epath, sizeof epath, "%s[%zu]", v.path, prm->n_values);
      struct yn ey = {e, v.key, epath};
      struct sw_spec_kv *kv = &prm->values[prm->n_values];
      rc = scalar_value(L, &ey, &kv->value, &kv->text);
      if (rc) break;
      kv->key = strdup(k);
      prm->n_values++;
      if (!kv->key) return oom(L);
      for (size_t j = 0; j + 1 < prm->n_values; j++)
        if (json_equal(prm->values[j].value, kv->value))
          return fail(L, &ey, "%s: value '%s' appears twice", ey.path, kv->text);
    }
  }
  return rc;
}

static int load_checkpoints(struct loader *L, const struct yn *y, struct sw_spec *s) {
  if (!y->n || y->n->kind != SW_YSEQ)
    return fail(L, y, "checkpoints: expected a sequence of iterations");
  int n = (int)y->n->n;
  if (n > 64) return fail(L, y, "checkpoints: more than 64");
  s->checkpoints = calloc(n ? (size_t)n : 1, sizeof *s->checkpoints);
  if (!s->checkpoints) return oom(L);
  size_t it = 0;
  struct sw_ynode *e;
  char epath[64];
  int rc = 0;
  while (!rc && (e = seq_next(y->n, &it)) != NULL) {
    snprintf(epath, sizeof epath, "checkpoints[%zu]", s->n_checkpoints);
    struct yn ey = {e, y->key, epath};
    uint32_t v;
    rc = get_u32(L, &ey, 1, 100000000, &v);
    if (rc) break;
    if (s->n_checkpoints && v <= s->checkpoints[s->n_checkpoints - 1])
      return fail(L, &ey, "%s: checkpoints must be ascending", epath);
    s->checkpoints[s->n_checkpoints++] = v;
  }
  return rc;
}

static int name_ok(const char *s) {
  if (!*s) return 0;
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-')) return 0;
  return 1;
}

static void set_defaults(struct sw_spec *s) {
  s->pairs.n = 5;
  s->pairs.max = 8;
  s->pairs.order = SW_ORDER_ALTERNATE;
  s->pairs.seed = 1;
  s->gate.direction = SW_DIR_LOWER;
  s->gate.k = 2.0;
  s->gate.floor = 0.01;
  s->gate.guard.max_drop = 0.05;
  s->gate.alpha = 0.05;
  s->gate.size_tolerance = SW_GATE_SIZE_TOL;
  s->repeats = 1;
  s->placement.spread = true;
  s->contamination = sw_spec_contamination_defaults();
  s->artifacts = sw_spec_artifacts_defaults();
  s->scene.train_views = 40;
  s->scene.test_views = 10;
  s->scene.resolution = 128;
  s->scene.seed = 1;
}

/* Strings that default when absent (after loading, so a given value is never overwritten). */
static int fill_default_strings(struct sw_spec *s) {
  if (!s->gate.metric && !(s->gate.metric = strdup("train_s"))) return SW_ENOMEM;
  if (!s->gate.guard.metric && !(s->gate.guard.metric = strdup("psnr_db"))) return SW_ENOMEM;
  if (s->scene.kind == SW_SCENE_GENERATE && !s->scene.gen_kind &&
      !(s->scene.gen_kind = strdup("bricks")))
    return SW_ENOMEM;
  return 0;
}

/* A gate whose arms resolve to the same configuration compares a thing with itself: refused,
 * because it would spend the fleet's time on a null result by construction. */
static int arms_differ(struct loader *L, const struct yn *arms) {
  struct sw_spec_config off, on;
  struct sw_err e = {0};
  if (sw_spec_resolve_arm(L->s, "off", &off, &e)) return oom(L);
  if (sw_spec_resolve_arm(L->s, "on", &on, &e)) {
    sw_spec_config_clear(&off);
    return oom(L);
  }
  json_t *a = sw_spec_config_to_json(&off), *b = sw_spec_config_to_json(&on);
  int same = a && b && json_equal(a, b);
  int rc = (!a || !b) ? oom(L) : 0;
  json_decref(a);
  json_decref(b);
  sw_spec_config_clear(&off);
  sw_spec_config_clear(&on);
  if (!rc && same)
    rc = fail(L, arms, "arms: off and on resolve to the same trainer config (nothing to compare)");
  return rc;
}

/* The builtin trainer's options (`device` and any other key) are trainer config defaults for
 * every run: they are folded into the front of `base`, where base, arms and grid points override
 * them, so everything downstream (store, scheduler, worker) sees one ordered config. */
static int fold_builtin_options(struct loader *L) {
  struct sw_spec *s = L->s;
  if (s->trainer.kind != SW_TRAINER_BUILTIN || (!s->trainer.device && !s->trainer.options.n))
    return 0;
  struct sw_spec_config merged = {0};
  int rc = 0;
  if (s->trainer.device) {
    json_t *v = json_string(s->trainer.device);
    rc = v ? sw_spec_config_set(&merged, "device", v, s->trainer.device) : SW_ENOMEM;
    json_decref(v);
  }
  for (size_t i = 0; !rc && i < s->trainer.options.n; i++)
    rc = sw_spec_config_set(&merged, s->trainer.options.items[i].key,
                            s->trainer.options.items[i].value, s->trainer.options.items[i].text);
  for (size_t i = 0; !rc && i < s->base.n; i++)
    rc = sw_spec_config_set(&merged, s->base.items[i].key, s->base.items[i].value,
                            s->base.items[i].text);
  if (rc) {
    sw_spec_config_clear(&merged);
    return oom(L);
  }
  sw_spec_config_clear(&s->base);
  s->base = merged;
  return 0;
}

static const char *const kind_names[] = {"gate", "grid", NULL};

static int load_root(struct loader *L, struct sw_ynode *root) {
  struct sw_spec *s = L->s;
  struct yn y = {root, NULL, ""};
  int rc = want_map(L, &y);
  if (rc) return rc;
  /* kind decides which other sections are allowed, so it is read first. */
  struct sw_ypair *kind_pair = NULL;
  {
    size_t it = 0;
    struct sw_ypair *p;
    char k[128];
    while ((p = map_next(root, &it)) != NULL) {
      if (pair_key(L, &y, p, k, sizeof k)) return SW_EINVAL;
      if (!strcmp(k, "kind")) kind_pair = p;
    }
  }
  if (!kind_pair) return missing_key(L, &y, "kind");
  struct yn ky = {kind_pair->value, kind_pair->key, "kind"};
  int kind;
  rc = get_enum(L, &ky, kind_names, &kind);
  if (rc) return rc;
  s->kind = kind == 0 ? SW_SPEC_GATE : SW_SPEC_GRID;
  const int gate = s->kind == SW_SPEC_GATE;

  int have_name = 0, have_trainer = 0, have_arms = 0, have_scene = 0, max_given = 0;
  struct yn arms_y = {0}, params_y = {0};
  char path[256];
  FOR_PAIRS(L, &y, p, k, rc) {
    struct yn v = child(&y, p, path, sizeof path, k);
    struct yn kyy = {p->key, p->key, ""};
    if (!strcmp(k, "kind")) continue;
    if (!strcmp(k, "name")) {
      have_name = 1;
      rc = get_str(L, &v, SW_MSG_ID_MAX, 0, &s->name);
      if (!rc && !name_ok(s->name))
        return fail(L, &v, "name: '%s' may hold only letters, digits, '.', '_' and '-'", s->name);
    } else if (!strcmp(k, "description")) {
      rc = get_str(L, &v, TEXT_MAX, 1, &s->description);
    } else if (!strcmp(k, "priority")) {
      long long pr;
      rc = get_int(L, &v, -1000, 1000, &pr);
      if (!rc) s->priority = (int32_t)pr;
    } else if (!strcmp(k, "trainer")) {
      have_trainer = 1;
      rc = load_trainer(L, &v, &s->trainer);
    } else if (!strcmp(k, "scene")) {
      have_scene = 1;
      rc = load_scene(L, &v, &s->scene);
    } else if (!strcmp(k, "base")) {
      rc = load_config(L, &v, &s->base, NULL);
    } else if (!strcmp(k, "placement")) {
      rc = load_placement(L, &v, &s->placement);
    } else if (!strcmp(k, "contamination")) {
      rc = load_contamination(L, &v, &s->contamination);
    } else if (!strcmp(k, "notify")) {
      rc = load_notify(L, &v, &s->notify);
    } else if (!strcmp(k, "artifacts")) {
      rc = load_artifacts(L, &v, &s->artifacts);
    } else if (!strcmp(k, "arms") || !strcmp(k, "pairs") || !strcmp(k, "gate")) {
      if (!gate) return fail(L, &kyy, "'%s' belongs to kind: gate, not grid", k);
      if (!strcmp(k, "arms")) {
        have_arms = 1;
        arms_y = v;
        rc = load_arms(L, &v, s);
      } else if (!strcmp(k, "pairs")) {
        rc = load_pairs(L, &v, &s->pairs, &max_given);
      } else {
        rc = load_gate(L, &v, &s->gate);
      }
    } else if (!strcmp(k, "parameters") || !strcmp(k, "repeats") || !strcmp(k, "checkpoints")) {
      if (gate) return fail(L, &kyy, "'%s' belongs to kind: grid, not gate", k);
      if (!strcmp(k, "parameters")) {
        params_y = v;
        rc = load_parameters(L, &v, s);
      } else if (!strcmp(k, "repeats"))
        rc = get_u32(L, &v, 1, SW_SPEC_REPEATS_MAX, &s->repeats);
      else
        rc = load_checkpoints(L, &v, s);
    } else {
      return unknown_key(L, p, &y, k,
                         gate ? "name, kind, description, priority, trainer, scene, base, arms, "
                                "pairs, placement, gate, contamination, notify, artifacts"
                              : "name, kind, description, priority, trainer, scene, base, "
                                "parameters, repeats, checkpoints, placement, contamination, "
                                "notify, artifacts");
    }
  }
  if (rc) return rc;
  if (!have_name) return missing_key(L, &y, "name");
  if (!have_trainer) return missing_key(L, &y, "trainer");
  if (gate && !have_arms) return missing_key(L, &y, "arms");
  if (!have_scene && s->trainer.kind == SW_TRAINER_BUILTIN)
    return fail(L, &y, "missing required key 'scene' in spec (the builtin trainer needs one)");
  /* max follows n when only n is given, so `n: 10` alone is not an error. */
  if (gate && !max_given && s->pairs.max < s->pairs.n) s->pairs.max = s->pairs.n;
  if (gate && (rc = arms_differ(L, &arms_y))) return rc;
  if (!gate) {
    size_t total = s->repeats;
    for (size_t i = 0; i < s->n_params; i++) {
      total *= s->params[i].n_values;
      if (total > SW_SPEC_GRID_RUNS_MAX)
        return fail(L, params_y.n ? &params_y : &y, "parameters: the grid has more than %d runs",
                    SW_SPEC_GRID_RUNS_MAX);
    }
  }
  if (fill_default_strings(s)) return oom(L);
  return fold_builtin_options(L);
}

/* ---- entry points -------------------------------------------------------------------- */

static void spec_free(struct sw_spec *s) {
  free(s->source);
  free(s->name);
  free(s->description);
  free(s->trainer.device);
  sw_spec_config_clear(&s->trainer.options);
  for (size_t i = 0; s->trainer.command && i < s->trainer.n_command; i++)
    free(s->trainer.command[i]);
  free(s->trainer.command);
  free(s->trainer.result);
  sw_spec_config_clear(&s->trainer.env);
  for (size_t i = 0; i < s->trainer.n_map; i++) {
    free(s->trainer.map[i].metric);
    free(s->trainer.map[i].pointer);
  }
  free(s->trainer.map);
  free(s->scene.gen_kind);
  free(s->scene.path);
  free(s->scene.url);
  sw_spec_config_clear(&s->base);
  sw_spec_config_clear(&s->arm_off);
  sw_spec_config_clear(&s->arm_on);
  free(s->gate.metric);
  free(s->gate.guard.metric);
  for (size_t i = 0; i < s->n_params; i++) {
    struct sw_spec_config c = {s->params[i].values, s->params[i].n_values};
    sw_spec_config_clear(&c);
    free(s->params[i].key);
  }
  free(s->params);
  free(s->checkpoints);
  for (size_t i = 0; i < s->placement.n_match; i++) {
    free(s->placement.match[i].key);
    free(s->placement.match[i].glob);
  }
  free(s->placement.match);
  free(s->placement.pin);
  free(s->notify.webhook);
  free(s);
}

void sw_spec_destroy(struct sw_spec **spec) {
  if (!spec || !*spec) return;
  spec_free(*spec);
  *spec = NULL;
}

int sw_spec_load_string(const char *yaml, const char *name_for_errors, struct sw_spec **out,
                        struct sw_err *err) {
  *out = NULL;
  struct loader L = {name_for_errors ? name_for_errors : "<spec>", err, NULL};
  if (!yaml) return sw_err_set(err, SW_EINVAL, "%s:1:1: no spec text", L.file);
  size_t len = strlen(yaml);
  if (len > SPEC_YAML_MAX)
    return sw_err_set(err, SW_EINVAL,
                      "%s:1:1: spec of %zu bytes is larger than %u bytes (the limit)", L.file, len,
                      SPEC_YAML_MAX);
  const struct sw_ylimits lim = {SPEC_NODES_MAX, SPEC_DEPTH_MAX, SPEC_MAP_KEYS_MAX,
                                 SPEC_ANCHORS_MAX};
  struct sw_ydoc *doc = NULL;
  int rc = sw_yaml_load(L.file, yaml, len, &lim, &doc, err);
  if (!rc && !doc->root) rc = sw_err_set(err, SW_EINVAL, "%s:1:1: empty spec", L.file);
  if (!rc && !(L.s = calloc(1, sizeof *L.s))) rc = oom(&L);
  if (!rc) {
    set_defaults(L.s);
    L.s->source = strdup(L.file);
    rc = L.s->source ? load_root(&L, doc->root) : oom(&L);
  }
  sw_ydoc_free(doc);
  if (rc) {
    if (L.s) spec_free(L.s);
    return rc;
  }
  *out = L.s;
  return 0;
}

int sw_spec_load_file(const char *path, struct sw_spec **out, struct sw_err *err) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  int rc = sw_fs_read_all(path, &text, &len, err);
  if (rc) return rc;
  if (strlen(text) != len) {
    free(text);
    return sw_err_set(err, SW_EINVAL, "%s:1:1: file holds a NUL byte", path);
  }
  rc = sw_spec_load_string(text, path, out, err);
  free(text);
  return rc;
}

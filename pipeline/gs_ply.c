/* gs_ply.c: 3DGS PLY writer (fixed standard layout) and a tolerant reader (any property order,
 * ascii or binary of either endianness, lower SH degrees). The whole file is read into memory:
 * models are at most a few hundred MB and this keeps truncation checks exact. */
#include "gs_ply.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_model.h"
#include "sw_fs.h"

#define REST_MAX 45
#define FLOATS_PER 62 /* 3 + 3 + 3 + 45 + 1 + 3 + 4 */

int gs_ply_write(const char *path, const struct gs_model *m, struct sw_err *err) {
  char header[4096];
  int off = snprintf(header, sizeof header,
                     "ply\nformat binary_little_endian 1.0\nelement vertex %u\n"
                     "property float x\nproperty float y\nproperty float z\n"
                     "property float nx\nproperty float ny\nproperty float nz\n",
                     m->count);
  for (int k = 0; k < 3; k++)
    off += snprintf(header + off, sizeof header - off, "property float f_dc_%d\n", k);
  for (int k = 0; k < REST_MAX; k++)
    off += snprintf(header + off, sizeof header - off, "property float f_rest_%d\n", k);
  off += snprintf(header + off, sizeof header - off, "property float opacity\n");
  for (int k = 0; k < 3; k++)
    off += snprintf(header + off, sizeof header - off, "property float scale_%d\n", k);
  for (int k = 0; k < 4; k++)
    off += snprintf(header + off, sizeof header - off, "property float rot_%d\n", k);
  off += snprintf(header + off, sizeof header - off, "end_header\n");

  size_t body = (size_t)m->count * FLOATS_PER * sizeof(float);
  unsigned char *buf = malloc((size_t)off + body);
  if (!buf) return sw_err_set(err, SW_ENOMEM, "%s: out of memory for %u splats", path, m->count);
  memcpy(buf, header, (size_t)off);
  float *f = (float *)(void *)(buf + off);
  /* Assemble floats in an aligned row, then copy: the header length leaves the body unaligned. */
  for (uint32_t i = 0; i < m->count; i++) {
    float row[FLOATS_PER];
    int p = 0;
    for (int k = 0; k < 3; k++) row[p++] = m->means[3 * (size_t)i + k];
    for (int k = 0; k < 3; k++) row[p++] = 0.0f;
    const float *sh = m->sh + (size_t)i * GS_MODEL_SH_PER;
    for (int c = 0; c < 3; c++) row[p++] = sh[c];
    for (int c = 0; c < 3; c++)
      for (int j = 1; j < GS_SH_COEFFS; j++) row[p++] = sh[3 * j + c];
    row[p++] = m->opacity[i];
    for (int k = 0; k < 3; k++) row[p++] = m->log_scales[3 * (size_t)i + k];
    for (int k = 0; k < 4; k++) row[p++] = m->quats[4 * (size_t)i + k];
    /* The writer targets little-endian hosts (x86-64, arm64: every platform the lab uses). */
    memcpy((unsigned char *)f + (size_t)i * sizeof row, row, sizeof row);
  }
  int rc = sw_fs_write_atomic(path, buf, (size_t)off + body, err);
  free(buf);
  return rc;
}

/* ---- reader ---- */

enum ply_fmt { PLY_ASCII, PLY_LE, PLY_BE };
enum { T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_F32, T_F64, T_LIST };

struct prop {
  char name[64];
  int type;
  int count_type, item_type; /* for lists */
  size_t offset;             /* within a binary row (fixed-size elements only) */
};

struct element {
  char name[64];
  unsigned long long count;
  struct prop *props;
  int nprops;
  int has_list;
  size_t stride;
};

struct header {
  enum ply_fmt fmt;
  struct element *el;
  int nel;
  size_t body; /* offset of the data */
};

static int type_of(const char *s) {
  static const struct {
    const char *n;
    int t;
  } names[] = {{"char", T_I8},   {"int8", T_I8},     {"uchar", T_U8},   {"uint8", T_U8},
               {"short", T_I16}, {"int16", T_I16},   {"ushort", T_U16}, {"uint16", T_U16},
               {"int", T_I32},   {"int32", T_I32},   {"uint", T_U32},   {"uint32", T_U32},
               {"float", T_F32}, {"float32", T_F32}, {"double", T_F64}, {"float64", T_F64}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(s, names[i].n)) return names[i].t;
  return -1;
}

static size_t type_size(int t) {
  static const size_t sz[] = {1, 1, 2, 2, 4, 4, 4, 8};
  return sz[t];
}

static void header_free(struct header *h) {
  for (int i = 0; i < h->nel; i++) free(h->el[i].props);
  free(h->el);
  h->el = NULL;
  h->nel = 0;
}

static int parse_header(const char *path, const char *data, size_t len, struct header *h,
                        struct sw_err *err) {
  memset(h, 0, sizeof *h);
  if (len < 4 || memcmp(data, "ply", 3) || (data[3] != '\n' && data[3] != '\r'))
    return sw_err_set(err, SW_EINVAL, "%s: not a PLY file (first line is not \"ply\")", path);
  size_t pos = 0;
  int line_no = 0, have_format = 0;
  for (;;) {
    if (pos >= len)
      return sw_err_set(err, SW_EINVAL, "%s: PLY header has no end_header line", path);
    const char *nl = memchr(data + pos, '\n', len - pos);
    if (!nl) return sw_err_set(err, SW_EINVAL, "%s: PLY header has no end_header line", path);
    size_t ll = (size_t)(nl - (data + pos));
    line_no++;
    char line[512];
    if (ll >= sizeof line)
      return sw_err_set(err, SW_EINVAL, "%s:%d: PLY header line too long", path, line_no);
    memcpy(line, data + pos, ll);
    line[ll] = '\0';
    if (ll && line[ll - 1] == '\r') line[ll - 1] = '\0';
    pos += ll + 1;
    char w0[64] = "", w1[64] = "", w2[64] = "", w3[64] = "", w4[64] = "";
    int nw = sscanf(line, "%63s %63s %63s %63s %63s", w0, w1, w2, w3, w4);
    if (nw <= 0) continue;
    if (line_no == 1) continue; /* "ply" */
    if (!strcmp(w0, "comment") || !strcmp(w0, "obj_info")) continue;
    if (!strcmp(w0, "end_header")) break;
    if (!strcmp(w0, "format")) {
      if (!strcmp(w1, "ascii"))
        h->fmt = PLY_ASCII;
      else if (!strcmp(w1, "binary_little_endian"))
        h->fmt = PLY_LE;
      else if (!strcmp(w1, "binary_big_endian"))
        h->fmt = PLY_BE;
      else
        return sw_err_set(err, SW_EINVAL, "%s:%d: unknown PLY format '%s'", path, line_no, w1);
      have_format = 1;
    } else if (!strcmp(w0, "element")) {
      char *end = NULL;
      unsigned long long cnt = strtoull(w2, &end, 10);
      if (nw < 3 || !end || *end || w2[0] == '-')
        return sw_err_set(err, SW_EINVAL, "%s:%d: bad element line '%s'", path, line_no, line);
      struct element *ne = realloc(h->el, (size_t)(h->nel + 1) * sizeof *ne);
      if (!ne) return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
      h->el = ne;
      memset(&h->el[h->nel], 0, sizeof h->el[0]);
      snprintf(h->el[h->nel].name, sizeof h->el[0].name, "%s", w1);
      h->el[h->nel].count = cnt;
      h->nel++;
    } else if (!strcmp(w0, "property")) {
      if (h->nel == 0)
        return sw_err_set(err, SW_EINVAL, "%s:%d: property before any element", path, line_no);
      struct element *e = &h->el[h->nel - 1];
      struct prop p = {0};
      if (!strcmp(w1, "list")) {
        p.type = T_LIST;
        p.count_type = type_of(w2);
        p.item_type = type_of(w3);
        if (nw < 5 || p.count_type < 0 || p.item_type < 0 || p.count_type == T_F32 ||
            p.count_type == T_F64)
          return sw_err_set(err, SW_EINVAL, "%s:%d: bad list property '%s'", path, line_no, line);
        snprintf(p.name, sizeof p.name, "%s", w4);
        e->has_list = 1;
      } else {
        p.type = type_of(w1);
        if (nw < 3 || p.type < 0)
          return sw_err_set(err, SW_EINVAL, "%s:%d: bad property '%s'", path, line_no, line);
        snprintf(p.name, sizeof p.name, "%s", w2);
        p.offset = e->stride;
        e->stride += type_size(p.type);
      }
      struct prop *np = realloc(e->props, (size_t)(e->nprops + 1) * sizeof *np);
      if (!np) return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
      e->props = np;
      e->props[e->nprops++] = p;
    } else {
      return sw_err_set(err, SW_EINVAL, "%s:%d: unexpected PLY header line '%s'", path, line_no,
                        line);
    }
  }
  if (!have_format) return sw_err_set(err, SW_EINVAL, "%s: PLY header has no format line", path);
  h->body = pos;
  return 0;
}

static double load_bin(const unsigned char *p, int type, int swap) {
  unsigned char b[8];
  size_t n = type_size(type);
  for (size_t i = 0; i < n; i++) b[i] = swap ? p[n - 1 - i] : p[i];
  switch (type) {
  case T_I8: {
    int8_t v;
    memcpy(&v, b, 1);
    return v;
  }
  case T_U8: return b[0];
  case T_I16: {
    int16_t v;
    memcpy(&v, b, 2);
    return v;
  }
  case T_U16: {
    uint16_t v;
    memcpy(&v, b, 2);
    return v;
  }
  case T_I32: {
    int32_t v;
    memcpy(&v, b, 4);
    return v;
  }
  case T_U32: {
    uint32_t v;
    memcpy(&v, b, 4);
    return v;
  }
  case T_F32: {
    float v;
    memcpy(&v, b, 4);
    return v;
  }
  default: {
    double v;
    memcpy(&v, b, 8);
    return v;
  }
  }
}

/* Destination of each vertex property in the model: a float index within a 62-slot row in the
 * writer's order, or -1 (ignored). */
static int find_rest_count(const struct element *e) {
  int n = 0;
  for (int i = 0; i < e->nprops; i++)
    if (!strncmp(e->props[i].name, "f_rest_", 7)) n++;
  return n;
}

static int slot_of(const char *name, int rest_per_channel) {
  static const char *fixed[] = {"x", "y", "z"};
  for (int k = 0; k < 3; k++)
    if (!strcmp(name, fixed[k])) return k;
  int idx;
  char tail;
  if (sscanf(name, "f_dc_%d%c", &idx, &tail) == 1 && idx >= 0 && idx < 3) return 6 + idx;
  if (sscanf(name, "f_rest_%d%c", &idx, &tail) == 1 && idx >= 0 && idx < 3 * rest_per_channel) {
    int c = idx / rest_per_channel, j = idx % rest_per_channel; /* coefficient j + 1 */
    return 9 + c * 15 + j;
  }
  if (!strcmp(name, "opacity")) return 54;
  if (sscanf(name, "scale_%d%c", &idx, &tail) == 1 && idx >= 0 && idx < 3) return 55 + idx;
  if (sscanf(name, "rot_%d%c", &idx, &tail) == 1 && idx >= 0 && idx < 4) return 58 + idx;
  return -1;
}

static void row_to_model(struct gs_model *m, uint32_t i, const float *row) {
  for (int k = 0; k < 3; k++) m->means[3 * (size_t)i + k] = row[k];
  float *sh = m->sh + (size_t)i * GS_MODEL_SH_PER;
  for (int c = 0; c < 3; c++) sh[c] = row[6 + c];
  for (int c = 0; c < 3; c++)
    for (int j = 1; j < GS_SH_COEFFS; j++) sh[3 * j + c] = row[9 + c * 15 + (j - 1)];
  m->opacity[i] = row[54];
  for (int k = 0; k < 3; k++) m->log_scales[3 * (size_t)i + k] = row[55 + k];
  for (int k = 0; k < 4; k++) m->quats[4 * (size_t)i + k] = row[58 + k];
}

/* Skips one element's data in a binary body; lists need their counts read. */
static int skip_binary(const char *path, const struct element *e, const unsigned char *d,
                       size_t len, size_t *pos, int swap, struct sw_err *err) {
  if (!e->has_list) {
    if (e->stride && e->count > (len - *pos) / e->stride)
      return sw_err_set(err, SW_EINVAL, "%s: truncated data in element '%s'", path, e->name);
    *pos += (size_t)e->count * e->stride;
    return 0;
  }
  for (unsigned long long r = 0; r < e->count; r++)
    for (int k = 0; k < e->nprops; k++) {
      const struct prop *p = &e->props[k];
      int t = p->type == T_LIST ? p->count_type : p->type;
      if (len - *pos < type_size(t))
        return sw_err_set(err, SW_EINVAL, "%s: truncated data in element '%s'", path, e->name);
      if (p->type == T_LIST) {
        double n = load_bin(d + *pos, p->count_type, swap);
        *pos += type_size(p->count_type);
        /* The count is checked before it becomes a size: a negative double converted to size_t
         * is undefined behaviour. */
        if (n < 0 || n > (double)((len - *pos) / type_size(p->item_type)))
          return sw_err_set(err, SW_EINVAL, "%s: truncated data in element '%s'", path, e->name);
        *pos += (size_t)n * type_size(p->item_type);
      } else {
        *pos += type_size(t);
      }
    }
  return 0;
}

/* Next whitespace-separated token of an ascii body as a double. */
static int next_ascii(const char *d, size_t len, size_t *pos, double *v) {
  while (*pos < len && (d[*pos] == ' ' || d[*pos] == '\t' || d[*pos] == '\n' || d[*pos] == '\r'))
    (*pos)++;
  if (*pos >= len) return -1;
  char tok[64];
  size_t n = 0;
  while (*pos < len && !(d[*pos] == ' ' || d[*pos] == '\t' || d[*pos] == '\n' || d[*pos] == '\r')) {
    if (n + 1 < sizeof tok) tok[n++] = d[*pos];
    (*pos)++;
  }
  tok[n] = '\0';
  char *end = NULL;
  *v = strtod(tok, &end);
  return (end && *end == '\0' && n > 0) ? 0 : -2;
}

int gs_ply_read(const char *path, struct gs_model **out, int *sh_degree_out, struct sw_err *err) {
  *out = NULL;
  char *data = NULL;
  size_t len = 0;
  int rc = sw_fs_read_all(path, &data, &len, err);
  if (rc) return rc;
  struct header h;
  int *slots = NULL;
  struct gs_model *m = NULL;
  rc = parse_header(path, data, len, &h, err);
  if (rc) goto done;
  int vi = -1;
  for (int i = 0; i < h.nel; i++)
    if (!strcmp(h.el[i].name, "vertex")) vi = i;
  if (vi < 0) {
    rc = sw_err_set(err, SW_EINVAL, "%s: PLY has no 'vertex' element", path);
    goto done;
  }
  const struct element *ve = &h.el[vi];
  if (ve->has_list) {
    rc = sw_err_set(err, SW_EINVAL, "%s: list property in the vertex element", path);
    goto done;
  }
  int nrest = find_rest_count(ve);
  int degree = nrest == 0 ? 0 : nrest == 9 ? 1 : nrest == 24 ? 2 : nrest == 45 ? 3 : -1;
  if (degree < 0) {
    rc = sw_err_set(err, SW_EINVAL,
                    "%s: %d f_rest properties; a 3DGS PLY has 0, 9, 24 or 45 (SH degree 0-3)", path,
                    nrest);
    goto done;
  }
  int per_channel = nrest / 3;
  slots = malloc((size_t)ve->nprops * sizeof *slots);
  if (!slots) {
    rc = sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  int seen[FLOATS_PER] = {0};
  for (int k = 0; k < ve->nprops; k++) {
    slots[k] = slot_of(ve->props[k].name, per_channel);
    if (slots[k] >= 0) {
      if (seen[slots[k]]) {
        rc = sw_err_set(err, SW_EINVAL, "%s: property '%s' appears twice", path, ve->props[k].name);
        goto done;
      }
      seen[slots[k]] = 1;
    }
  }
  static const char *required[] = {"x",      "y",       "z",       "f_dc_0",  "f_dc_1",
                                   "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
                                   "rot_0",  "rot_1",   "rot_2",   "rot_3"};
  for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
    if (!seen[slot_of(required[k], per_channel)]) {
      rc = sw_err_set(err, SW_EINVAL, "%s: PLY vertex element lacks property '%s'", path,
                      required[k]);
      goto done;
    }
  for (int j = 0; j < nrest; j++) {
    char name[32];
    snprintf(name, sizeof name, "f_rest_%d", j);
    if (!seen[slot_of(name, per_channel)]) {
      rc = sw_err_set(err, SW_EINVAL, "%s: PLY vertex element lacks property '%s'", path, name);
      goto done;
    }
  }
  /* A count beyond what the file could hold is refused before allocating. */
  size_t min_row = h.fmt == PLY_ASCII ? 2 * (size_t)ve->nprops : ve->stride;
  if (ve->count > UINT32_MAX || (min_row && ve->count > (len - h.body) / min_row + 1)) {
    rc = sw_err_set(err, SW_EINVAL,
                    "%s: truncated PLY: header declares %llu vertices, the file "
                    "holds at most %zu",
                    path, ve->count, min_row ? (len - h.body) / min_row : 0);
    goto done;
  }
  uint32_t n = (uint32_t)ve->count;
  rc = gs_model_new(n, &m, err);
  if (rc) goto done;
  m->count = n;
  size_t pos = h.body;
  const unsigned char *d = (const unsigned char *)data;
  int swap = h.fmt == PLY_BE;
  float row[FLOATS_PER];
  if (h.fmt == PLY_ASCII) {
    /* Elements before the vertex element are skipped token by token (ascii lists carry counts). */
    for (int e = 0; e < vi; e++) {
      /* An element without properties has no data, whatever count its header claims. */
      if (h.el[e].nprops == 0) continue;
      for (unsigned long long r = 0; r < h.el[e].count; r++)
        for (int k = 0; k < h.el[e].nprops; k++) {
          double v;
          if (next_ascii(data, len, &pos, &v)) {
            rc = sw_err_set(err, SW_EINVAL, "%s: truncated or bad ascii data in element '%s'", path,
                            h.el[e].name);
            goto done;
          }
          if (h.el[e].props[k].type != T_LIST) continue;
          /* The list's length is kept apart from v, which each item read overwrites; a length
           * that is negative, NaN or beyond the remaining bytes is refused before conversion. */
          if (!(v >= 0 && v <= (double)(len - pos))) {
            rc = sw_err_set(err, SW_EINVAL, "%s: bad ascii list length in element '%s'", path,
                            h.el[e].name);
            goto done;
          }
          size_t items = (size_t)v;
          for (size_t c = 0; c < items; c++)
            if (next_ascii(data, len, &pos, &v)) {
              rc = sw_err_set(err, SW_EINVAL, "%s: truncated ascii list in element '%s'", path,
                              h.el[e].name);
              goto done;
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {
      memset(row, 0, sizeof row);
      for (int k = 0; k < ve->nprops; k++) {
        double v;
        int r = next_ascii(data, len, &pos, &v);
        if (r) {
          rc = sw_err_set(err, SW_EINVAL, "%s: %s ascii PLY at vertex %u of %u", path,
                          r == -1 ? "truncated" : "bad number in", i, n);
          goto done;
        }
        if (slots[k] >= 0) row[slots[k]] = (float)v;
      }
      row_to_model(m, i, row);
    }
  } else {
    for (int e = 0; e < vi; e++) {
      rc = skip_binary(path, &h.el[e], d, len, &pos, swap, err);
      if (rc) goto done;
    }
    if ((len - pos) / ve->stride < n) {
      rc = sw_err_set(err, SW_EINVAL,
                      "%s: truncated PLY: %u vertices of %zu bytes need %zu bytes, %zu present "
                      "(vertex %zu incomplete)",
                      path, n, ve->stride, (size_t)n * ve->stride, len - pos,
                      (len - pos) / ve->stride);
      goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
      memset(row, 0, sizeof row);
      const unsigned char *r = d + pos + (size_t)i * ve->stride;
      for (int k = 0; k < ve->nprops; k++)
        if (slots[k] >= 0) {
          const struct prop *p = &ve->props[k];
          if (p->type == T_F32 && !swap)
            memcpy(&row[slots[k]], r + p->offset, 4);
          else
            row[slots[k]] = (float)load_bin(r + p->offset, p->type, swap);
        }
      row_to_model(m, i, row);
    }
  }
  if (sh_degree_out) *sh_degree_out = degree;
  *out = m;
  m = NULL;
  rc = 0;
done:
  gs_model_destroy(&m);
  free(slots);
  header_free(&h);
  free(data);
  return rc;
}

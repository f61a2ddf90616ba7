#!/usr/bin/env python3
"""schema_to_c.py: compiles a JSON Schema (draft 2020-12) into a C validator over jansson.

    schema_to_c.py SCHEMA.json OUT.c FUNCTION [HEADER]

writes OUT.c defining `int FUNCTION(const json_t *doc, struct sw_err *err)`: 0 when doc is valid,
SW_EINVAL with "JSON-POINTER: what is wrong" of the first violation otherwise. The checks are
straight-line C, one function per schema node, generated at build time from the schema file that
docs/ publishes, so the coordinator and the trainer check results against exactly that file.

Only the keywords below are compiled; any other keyword stops the build (a schema edit can never
promise a check that the C does not make). When the python3-jsonschema package is installed, the
schema itself is first checked against the draft's meta-schema.

  annotations (ignored): $schema $id $comment title description examples default
  structure: $defs, $ref ("#/$defs/NAME"), if / then / else
  any type: type (a name or a list), const, enum (strings, numbers, booleans, null)
  objects: required properties additionalProperties (false or a schema) minProperties
           maxProperties
  arrays: items (one schema) minItems maxItems
  numbers: minimum maximum exclusiveMinimum exclusiveMaximum
  strings: minLength maxLength (code points) pattern (POSIX ERE; the common subset of ECMA-262
           and POSIX only: no backslashes, lazy quantifiers, groups with ?, or [: classes)

Differences from the standard, all towards strictness and documented in docs/result-schema.md:
an integer is a JSON integer or a number with no fractional part (as the standard says); a
pattern's `$` matches only at the very end (ECMA-262 without the m flag, unlike Python's re).
"""
import json
import re
import sys

ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "examples", "default"}
KNOWN = ANNOTATIONS | {
    "$defs", "$ref", "if", "then", "else", "type", "const", "enum", "required", "properties",
    "additionalProperties", "minProperties", "maxProperties", "items", "minItems", "maxItems",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "pattern",
}
TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


class SchemaError(Exception):
    pass


def c_str(s):
    """A C string literal for s (UTF-8 bytes, with non-printables as octal escapes)."""
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F and ch != "?":  # '?' escaped: no trigraphs
            out.append(ch)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def c_num(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise SchemaError("expected a number, got %r" % (x,))
    return repr(float(x))


TYPE_TEST = {
    "object": "json_is_object(v)",
    "array": "json_is_array(v)",
    "string": "json_is_string(v)",
    "integer": "is_integer(v)",
    "number": "json_is_number(v)",
    "boolean": "json_is_boolean(v)",
    "null": "json_is_null(v)",
}


def equals(value):
    """A C expression: v equals the JSON constant value."""
    if value is None:
        return "json_is_null(v)"
    if value is True:
        return "json_is_true(v)"
    if value is False:
        return "json_is_false(v)"
    if isinstance(value, (int, float)):
        return "(json_is_number(v) && json_number_value(v) == %s)" % c_num(value)
    if isinstance(value, str):
        n = len(value.encode("utf-8"))
        return "(json_is_string(v) && json_string_length(v) == %d && !memcmp(json_string_value(v), %s, %d))" % (
            n, c_str(value), n)
    raise SchemaError("const/enum of objects or arrays is not supported")


def check_pattern(pat, where):
    if "\\" in pat or "(?" in pat or "[:" in pat or re.search(r"[*+?}]\?", pat):
        raise SchemaError("%s: pattern %r is outside the ECMA-262/POSIX common subset" % (where, pat))
    re.compile(pat)


class Gen:
    def __init__(self, root):
        self.root = root
        self.funcs = []      # C function texts, in dependency order
        self.patterns = []   # pattern strings, index = regex slot
        self.defs = {}       # "$defs" name -> function name
        self.count = 0

    def new_name(self):
        self.count += 1
        return "node%d" % self.count

    def ref(self, ref, where):
        m = re.fullmatch(r"#/\$defs/([A-Za-z0-9_.-]+)", ref)
        if not m or m.group(1) not in self.root.get("$defs", {}):
            raise SchemaError("%s: $ref %r must name an entry of the root's $defs" % (where, ref))
        name = m.group(1)
        if name not in self.defs:
            self.defs[name] = None  # reserved: recursion through a $ref is not supported
            self.defs[name] = self.node(self.root["$defs"][name], "#/$defs/" + name)
        elif self.defs[name] is None:
            raise SchemaError("%s: recursive $ref %r is not supported" % (where, ref))
        return self.defs[name]

    def node(self, s, where):
        """Emits the function checking schema s; returns its name."""
        if s is True:
            return "node_true"
        if s is False:
            return "node_false"
        if not isinstance(s, dict):
            raise SchemaError("%s: a schema must be an object or a boolean" % where)
        unknown = sorted(set(s) - KNOWN)
        if unknown:
            raise SchemaError("%s: keyword %s is not compiled by schema_to_c.py" % (where, unknown[0]))
        if "$defs" in s and s is not self.root:
            raise SchemaError("%s: $defs only at the root" % where)
        name = self.new_name()
        body = []
        if "$ref" in s:
            target = self.ref(s["$ref"], where)
            body.append("  if ((rc = %s(v, p, err))) return rc;" % target)
        if "type" in s:
            t = s["type"]
            names = t if isinstance(t, list) else [t]
            for n in names:
                if n not in TYPES:
                    raise SchemaError("%s: unknown type %r" % (where, n))
            cond = " || ".join(TYPE_TEST[n] for n in names)
            body.append('  if (!(%s)) return bad(err, p, "expected %s, got %%s", kind(v));' % (
                cond, " or ".join(names)))
        if "const" in s:
            body.append('  if (!%s) return bad(err, p, "expected the constant %%s", %s);' % (
                equals(s["const"]), c_str(json.dumps(s["const"]))))
        if "enum" in s:
            if not isinstance(s["enum"], list) or not s["enum"]:
                raise SchemaError("%s: enum must be a non-empty list" % where)
            cond = " || ".join(equals(x) for x in s["enum"])
            shown = ", ".join(json.dumps(x) for x in s["enum"])
            body.append('  if (!(%s)) return bad(err, p, "%%s is not one of %%s", shown(v, sv), %s);' % (
                cond, c_str(shown)))
        num = [k for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in s]
        if num:
            body.append("  if (json_is_number(v)) {")
            body.append("    double x = json_number_value(v);")
            for k in num:
                op, what = {"minimum": ("<", "below the minimum"),
                            "maximum": (">", "above the maximum"),
                            "exclusiveMinimum": ("<=", "not above the exclusive minimum"),
                            "exclusiveMaximum": (">=", "not below the exclusive maximum")}[k]
                body.append('    if (x %s %s) return bad(err, p, "%%s is %s %%s", shown(v, sv), %s);' % (
                    op, c_num(s[k]), what, c_str(json.dumps(s[k]))))
            body.append("  }")
        strk = [k for k in ("minLength", "maxLength", "pattern") if k in s]
        if strk:
            body.append("  if (json_is_string(v)) {")
            if "minLength" in s or "maxLength" in s:
                body.append("    size_t n = utf8_len(json_string_value(v), json_string_length(v));")
                if "minLength" in s:
                    body.append('    if (n < %d) return bad(err, p, "a string of %%zu characters, shorter than %d", n);' % (
                        int(s["minLength"]), int(s["minLength"])))
                if "maxLength" in s:
                    body.append('    if (n > %d) return bad(err, p, "a string of %%zu characters, longer than %d", n);' % (
                        int(s["maxLength"]), int(s["maxLength"])))
            if "pattern" in s:
                check_pattern(s["pattern"], where)
                slot = len(self.patterns)
                self.patterns.append(s["pattern"])
                body.append('    if (!pattern_ok(%d, v)) return bad(err, p, "%%s does not match the pattern %%s", shown(v, sv), %s);' % (
                    slot, c_str(s["pattern"])))
            body.append("  }")
        objk = [k for k in ("required", "properties", "additionalProperties", "minProperties",
                            "maxProperties") if k in s]
        if objk:
            body.append("  if (json_is_object(v)) {")
            for k in ("minProperties", "maxProperties"):
                if k in s:
                    op = "<" if k == "minProperties" else ">"
                    body.append('    if (json_object_size(v) %s %d) return bad(err, p, "an object of %%zu properties, %s %d", json_object_size(v));' % (
                        op, int(s[k]), "fewer than" if op == "<" else "more than", int(s[k])))
            for r in s.get("required", []):
                body.append('    if (!json_object_get(v, %s)) return bad(err, p, "the required property %%s is missing", %s);' % (
                    c_str(r), c_str("'" + r + "'")))
            props = s.get("properties", {})
            for key, sub in props.items():
                fn = self.node(sub, where + "/properties/" + key)
                body.append("    {")
                body.append("      const json_t *c = json_object_get(v, %s);" % c_str(key))
                body.append("      if (c) {")
                body.append("        size_t at = push_key(p, %s);" % c_str(key))
                body.append("        rc = %s(c, p, err);" % fn)
                body.append("        pop(p, at);")
                body.append("        if (rc) return rc;")
                body.append("      }")
                body.append("    }")
            if "additionalProperties" in s:
                ap = s["additionalProperties"]
                known = " || ".join("!strcmp(key, %s)" % c_str(k) for k in props) or "0"
                body.append("    const char *key;")
                body.append("    json_t *c;")
                body.append("    json_object_foreach((json_t *)v, key, c) {")
                body.append("      if (%s) continue;" % known)
                if ap is False:
                    body.append('      return bad(err, p, "the property \'%s\' is not allowed", key);')
                elif ap is True:
                    body.append("      (void)c;")
                else:
                    fn = self.node(ap, where + "/additionalProperties")
                    body.append("      size_t at = push_key(p, key);")
                    body.append("      rc = %s(c, p, err);" % fn)
                    body.append("      pop(p, at);")
                    body.append("      if (rc) return rc;")
                body.append("    }")
            body.append("  }")
        arrk = [k for k in ("items", "minItems", "maxItems") if k in s]
        if arrk:
            body.append("  if (json_is_array(v)) {")
            for k in ("minItems", "maxItems"):
                if k in s:
                    op = "<" if k == "minItems" else ">"
                    body.append('    if (json_array_size(v) %s %d) return bad(err, p, "an array of %%zu items, %s %d", json_array_size(v));' % (
                        op, int(s[k]), "fewer than" if op == "<" else "more than", int(s[k])))
            if "items" in s:
                fn = self.node(s["items"], where + "/items")
                body.append("    size_t i;")
                body.append("    json_t *c;")
                body.append("    json_array_foreach(v, i, c) {")
                body.append("      size_t at = push_index(p, i);")
                body.append("      rc = %s(c, p, err);" % fn)
                body.append("      pop(p, at);")
                body.append("      if (rc) return rc;")
                body.append("    }")
            body.append("  }")
        if "if" in s:
            if "then" not in s and "else" not in s:
                raise SchemaError("%s: if without then or else" % where)
            cond = self.node(s["if"], where + "/if")
            then = self.node(s.get("then", True), where + "/then")
            other = self.node(s.get("else", True), where + "/else")
            body.append("  {")
            body.append("    struct sw_err scratch = {0};")
            body.append("    rc = %s(v, p, &scratch) == 0 ? %s(v, p, err) : %s(v, p, err);" % (
                cond, then, other))
            body.append("    if (rc) return rc;")
            body.append("  }")
        uses_sv = any("shown(v, sv)" in line for line in body)
        text = ["static int %s(const json_t *v, struct ptr *p, struct sw_err *err) {" % name]
        text.append("  int rc = 0;")
        if uses_sv:
            text.append("  char sv[64];")
        text.extend(body)
        text.append("  (void)p;")
        text.append("  (void)err;")
        text.append("  return rc;")
        text.append("}")
        self.funcs.append("\n".join(text))
        return name


PRELUDE = r'''/* Generated by common/schema_to_c.py from %(schema)s: do not edit, change the schema.
 * Every check below is one keyword of that schema; see the generator for what is compiled. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sw_err.h"
%(include)s
/* The JSON pointer (RFC 6901) of the value being checked, grown and shrunk as the checks descend;
 * a path longer than the buffer is cut (the message stays one line). */
struct ptr {
  char buf[512];
  size_t len;
};

static size_t push_raw(struct ptr *p, const char *s) {
  size_t at = p->len;
  for (; *s && p->len + 1 < sizeof p->buf; s++) p->buf[p->len++] = *s;
  p->buf[p->len] = '\0';
  return at;
}

static size_t push_key(struct ptr *p, const char *key) {
  size_t at = push_raw(p, "/");
  for (; *key; key++) push_raw(p, *key == '~' ? "~0" : *key == '/' ? "~1" : (char[2]){*key, 0});
  return at;
}

static size_t push_index(struct ptr *p, size_t i) {
  char n[32];
  snprintf(n, sizeof n, "/%%zu", i);
  return push_raw(p, n);
}

static void pop(struct ptr *p, size_t at) {
  p->len = at;
  p->buf[at] = '\0';
}

__attribute__((format(printf, 3, 4))) static int bad(struct sw_err *err, const struct ptr *p,
                                                     const char *fmt, ...) {
  char what[SW_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return sw_err_set(err, SW_EINVAL, "%%s: %%s", p->len ? p->buf : "/", what);
}

/* A JSON integer, or a number without a fractional part (JSON Schema's integer). */
static int is_integer(const json_t *v) {
  if (json_is_integer(v)) return 1;
  return json_is_real(v) && isfinite(json_real_value(v)) &&
         json_real_value(v) == floor(json_real_value(v));
}

static const char *kind(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

/* The value as short text for a message. */
static const char *shown(const json_t *v, char sv[64]) {
  if (json_is_string(v))
    snprintf(sv, 64, "'%%.40s%%s'", json_string_value(v), json_string_length(v) > 40 ? "..." : "");
  else if (json_is_integer(v))
    snprintf(sv, 64, "%%" JSON_INTEGER_FORMAT, json_integer_value(v));
  else if (json_is_number(v))
    snprintf(sv, 64, "%%.17g", json_number_value(v));
  else
    snprintf(sv, 64, "%%s", kind(v));
  return sv;
}

/* Code points of valid UTF-8 (jansson's strings are): bytes that do not continue a sequence. */
static size_t utf8_len(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
  return k;
}

static const char *const PATTERNS[] = {%(patterns)s};
#define N_PATTERNS %(n_patterns)d
static regex_t regex[N_PATTERNS ? N_PATTERNS : 1];
static int regex_ok[N_PATTERNS ? N_PATTERNS : 1];
static pthread_once_t regex_once = PTHREAD_ONCE_INIT;

static void regex_compile(void) {
  for (int i = 0; i < N_PATTERNS; i++)
    regex_ok[i] = regcomp(&regex[i], PATTERNS[i], REG_EXTENDED | REG_NOSUB) == 0;
}

/* A pattern the C library cannot compile matches nothing: the check fails closed. A string with
 * a NUL inside (jansson refuses them unless asked) never matches. */
static int pattern_ok(int k, const json_t *v) {
  pthread_once(&regex_once, regex_compile);
  if (!regex_ok[k] || strlen(json_string_value(v)) != json_string_length(v)) return 0;
  return regexec(&regex[k], json_string_value(v), 0, NULL, 0) == 0;
}

__attribute__((unused)) static int node_true(const json_t *v, struct ptr *p, struct sw_err *err) {
  (void)v;
  (void)p;
  (void)err;
  return 0;
}

__attribute__((unused)) static int node_false(const json_t *v, struct ptr *p, struct sw_err *err) {
  (void)v;
  return bad(err, p, "no value is allowed here");
}
'''


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    schema_path, out_path, func = argv[1], argv[2], argv[3]
    include = '#include "%s"\n' % argv[4] if len(argv) == 5 else ""
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        import jsonschema  # python3-jsonschema: the schema must itself be a valid schema
        jsonschema.Draft202012Validator.check_schema(schema)
    except ImportError:
        pass
    except Exception as e:  # jsonschema.SchemaError
        sys.stderr.write("%s: not a valid JSON Schema: %s\n" % (schema_path, e))
        return 1
    gen = Gen(schema)
    try:
        root = gen.node(schema, "#")
    except SchemaError as e:
        sys.stderr.write("%s: %s\n" % (schema_path, e))
        return 1
    out = [PRELUDE % {
        "schema": schema_path.split("/")[-1] if "/docs/" not in schema_path else
        "docs/" + schema_path.split("/docs/")[-1],
        "include": include,
        "patterns": ", ".join(c_str(p) for p in gen.patterns) or "NULL",
        "n_patterns": len(gen.patterns),
    }]
    out.extend(gen.funcs)
    out.append("int %s(const json_t *doc, struct sw_err *err) {\n"
               "  struct ptr p = {.len = 0};\n"
               "  p.buf[0] = '\\0';\n"
               "  if (!doc) return sw_err_set(err, SW_EINVAL, \"/: no document\");\n"
               "  return %s(doc, &p, err);\n"
               "}\n" % (func, root))
    text = "\n\n".join(out)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

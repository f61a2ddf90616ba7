#!/usr/bin/env python3
"""result_schema.py: the generated C result check (splatsweep check-result) against
python3-jsonschema on valid results and thousands of broken ones.

    result_schema.py SPLATSWEEP SCHEMA.json FIXTURE.json...

Each fixture (a real result from an H200 run of splat-train, a mapped foreign result) must be
valid for both; then every value in it is deleted, replaced by values of every JSON type and by
numbers and strings at the edges of the schema's ranges, and every object gets an unknown key.
Both validators judge each variant; any disagreement fails the test and is listed. A variant
whose verdict depends on a known, documented difference (a pattern's `$` before a final newline)
is asserted separately: the C refuses it.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

REPLACEMENTS = [None, True, False, 0, -1, 1, 2, 7, 0.5, -0.5, 1.5, 1e300, -1e300, "", "x",
                "a" * 64, "A" * 64, "0" * 63, "0" * 65, [], [1], {}, {"k": 1}, "adam", "cpu", "ok",
                "splatsweep.result/1"]


def paths(doc, prefix=()):
    """Every path to a value of doc (objects and arrays included), root excluded."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield prefix + (k,)
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield prefix + (i,)
            yield from paths(v, prefix + (i,))


def objects(doc, prefix=()):
    if isinstance(doc, dict):
        yield prefix
        for k, v in doc.items():
            yield from objects(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from objects(v, prefix + (i,))


def at(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def variants(base):
    for path in paths(base):
        parent = at(base, path[:-1])
        if isinstance(parent, dict):
            d = copy.deepcopy(base)
            del at(d, path[:-1])[path[-1]]
            yield d
        for r in REPLACEMENTS:
            d = copy.deepcopy(base)
            at(d, path[:-1])[path[-1]] = copy.deepcopy(r)
            yield d
    for path in objects(base):
        d = copy.deepcopy(base)
        at(d, path)["unexpected_key"] = 1
        yield d
    for r in REPLACEMENTS:  # the whole document replaced
        yield copy.deepcopy(r)


def c_verdicts(exe, files):
    out = subprocess.run([exe, "check-result"] + files, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit("check-result exited %d: %s" % (out.returncode, out.stderr))
    verdict = {}
    for line in out.stdout.splitlines():
        name, _, msg = line.partition(": ")
        verdict[name] = msg
    return verdict


def main(argv):
    exe, schema_path, fixtures = argv[1], argv[2], argv[3:]
    with open(schema_path) as f:
        schema = json.load(f)
    py = jsonschema.Draft202012Validator(schema)
    with tempfile.TemporaryDirectory() as tmp:
        docs, fixture_at = [], []
        for fx in fixtures:
            with open(fx) as f:
                base = json.load(f)
            errors = [e.message for e in py.iter_errors(base)]
            if errors:
                sys.exit("%s: python3-jsonschema refuses a fixture: %s" % (fx, errors[0]))
            fixture_at.append(len(docs))
            docs.append(base)
            docs.extend(variants(base))
        files = []
        for i, d in enumerate(docs):
            name = os.path.join(tmp, "r%05d.json" % i)
            with open(name, "w") as f:
                json.dump(d, f)
            files.append(name)
        c = {}
        for k in range(0, len(files), 500):
            c.update(c_verdicts(exe, files[k:k + 500]))
        disagree = []
        n_valid = 0
        for name, d in zip(files, docs):
            py_ok = py.is_valid(d)
            c_ok = c.get(name) == "ok"
            n_valid += py_ok
            if py_ok != c_ok:
                disagree.append("%s: python %s, C %s" % (
                    json.dumps(d)[:160], "valid" if py_ok else "invalid", c.get(name)))
        for fx, i in zip(fixtures, fixture_at):
            if c.get(files[i]) != "ok":
                sys.exit("%s: the C check refuses a fixture: %s" % (fx, c.get(files[i])))
        # The one known difference: Python's `$` matches before a final newline.
        d = copy.deepcopy(docs[0])
        d["config_sha256"] = d["config_sha256"] + "\n"
        nl = os.path.join(tmp, "newline.json")
        with open(nl, "w") as f:
            json.dump(d, f)
        c_nl = c_verdicts(exe, [nl])[nl]
        print("%d documents: %d valid, %d invalid; %d disagreements" % (
            len(docs), n_valid, len(docs) - n_valid, len(disagree)))
        print("a sha256 with a final newline: python %s, C: %s" % (
            "valid" if py.is_valid(d) else "invalid", c_nl))
        if c_nl == "ok":
            sys.exit("FAIL: the C check accepts a sha256 with a final newline")
        if disagree:
            print("FAIL: the C check and python3-jsonschema disagree:")
            for line in disagree[:20]:
                print("  " + line)
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

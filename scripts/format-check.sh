#!/usr/bin/env bash
# Fails when a C source or header of the tree differs from .clang-format (STYLE.md rule 11), naming
# each file; `clang-format -i FILE` fixes one. CI runs it from scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not clang-formatted: $f (clang-format -i $f)" >&2
    bad=$((bad + 1))
  fi
done < <(git ls-files '*.c' '*.h')
[ "$bad" -eq 0 ] || { echo "$bad file(s) differ from .clang-format" >&2; exit 1; }
echo "clang-format: every C file as .clang-format says"

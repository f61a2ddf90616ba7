#!/usr/bin/env bash
# Fuzzes the YAML readers (fuzz_config, fuzz_spec) against a libyaml built from source with the
# fuzzers' sanitizers and coverage, so that libFuzzer is guided inside the parser and a memory fault
# there is caught where it happens (Debian's libyaml is not instrumented: scripts/fuzz.sh finds
# faults inside it only by chance). Not part of CI: it needs libyaml's source.
#   scripts/fuzz-yaml-instrumented.sh SRC [SECONDS] [TARGET...]
# SRC is a libyaml source tree (src/*.c, include/yaml.h), e.g. `apt-get source libyaml` (with
# deb-src) or `git clone -b 0.2.5 https://github.com/yaml/libyaml`. SECONDS defaults to 300 per
# target; targets default to config and spec. Crashes go to build-fuzz/crashes/yaml-TARGET-*.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:?usage: scripts/fuzz-yaml-instrumented.sh LIBYAML_SRC [SECONDS] [TARGET...]}
secs=${2:-300}
shift $(($# >= 2 ? 2 : 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config spec)
[ -f "$src/include/yaml.h" ] && [ -f "$src/src/parser.c" ] ||
  { echo "$src: not a libyaml source tree (no include/yaml.h, src/parser.c)" >&2; exit 2; }
build=${SW_BUILD_DIR:-build-fuzz}
root=$PWD
CC=clang cmake -S . -B "$build" -DSW_FUZZ=ON -DSW_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null

# libyaml with the sanitizers and the fuzzer's coverage (its version macros come from its
# configure; any values do for a static build).
obj="$build/libyaml-instrumented"
rm -rf "$obj" && mkdir -p "$obj"
for f in "$src"/src/*.c; do
  clang -c -O1 -g -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined \
    -DYAML_VERSION_MAJOR=0 -DYAML_VERSION_MINOR=2 -DYAML_VERSION_PATCH=5 \
    -DYAML_VERSION_STRING='"0.2.5"' -I"$src/include" -I"$src/src" "$f" \
    -o "$obj/$(basename "$f" .c).o"
done
ar rcs "$obj/libyaml.a" "$obj"/*.o

export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
mkdir -p "$build/crashes"
failed=0
for t in "${targets[@]}"; do
  # The target's own link line, with the instrumented libyaml in place of the shared one.
  link=$(find "$root/$build" -path "*/fuzz_$t.dir/link.txt" | head -1)
  [ -n "$link" ] || { echo "no link line for fuzz_$t" >&2; exit 2; }
  exe="$root/$obj/fuzz_$t"
  (cd "$(dirname "$(dirname "$(dirname "$link")")")" &&
    eval "$(sed -E "s#-o [^ ]+#-o $exe#; s#[^ ]*libyaml[^ ]*\\.so#$root/$obj/libyaml.a#" "$link")")
  log="$build/fuzz-yaml-$t.log"
  mkdir -p "$build/corpus/yaml-$t"
  if "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="$build/crashes/yaml-$t-" \
       "$build/corpus/yaml-$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    printf 'fuzz %-7s (instrumented libyaml) ok: %s runs, coverage %s\n' "$t" \
      "$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")" \
      "$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
  else
    echo "fuzz $t (instrumented libyaml) FAILED (log $log):" >&2
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20 >&2
    failed=1
  fi
done
exit $failed

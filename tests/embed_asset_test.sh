#!/bin/sh
# embed_asset_test.sh CMAKE EMBED_SCRIPT CHARTJS SHA256 VERSION: drives cmake/embed_asset.cmake
# (tests/embed.cmake says what is checked). Exit 0 when every case behaves.
set -eu
CMAKE=$1 SCRIPT=$2 CHARTJS=$3 SHA=$4 VERSION=$5
T=$(mktemp -d /tmp/sw-embed-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
embed() { "$CMAKE" "-DIN=$1" "-DOUT=$T/out.c" -DSYMBOL=x "-DEXPECT_SHA256=$2" "-DEXPECT_TEXT=$3" -P "$SCRIPT"; }
# The pinned Chart.js passes, and the C holds its bytes: compiled and written back, they match.
embed "$CHARTJS" "$SHA" "Chart.js v$VERSION" >/dev/null 2>&1 || fail "the pinned Chart.js was refused"
cat >"$T/dump.c" <<'C'
#include <stdio.h>
extern const char x[];
extern const size_t x_len;
int main(void) { return fwrite(x, 1, x_len, stdout) == x_len ? 0 : 1; }
C
cc -o "$T/dump" "$T/dump.c" "$T/out.c" || fail "the generated C does not compile"
"$T/dump" >"$T/back.js"
cmp -s "$T/back.js" "$CHARTJS" || fail "the embedded bytes differ from $CHARTJS"
# Another sha256 (one byte changed): refused, naming both hashes.
cp "$CHARTJS" "$T/other.js"
printf ' ' >>"$T/other.js"
if embed "$T/other.js" "$SHA" "" >"$T/log" 2>&1; then fail "a different Chart.js was embedded"; fi
grep -q "$SHA" "$T/log" || fail "the refusal does not name the expected sha256: $(cat "$T/log")"
# The version banner is checked.
if embed "$CHARTJS" "" "Chart.js v9.9.9" >"$T/log" 2>&1; then fail "a wrong version banner passed"; fi
# Text that would end the <script> element it is inlined in.
printf 'var a = "</SCRIPT>";\n' >"$T/bad.js"
if embed "$T/bad.js" "" "" >"$T/log" 2>&1; then fail "a file with </script was embedded"; fi
grep -q "</script" "$T/log" || fail "the refusal does not say why: $(cat "$T/log")"
echo PASS

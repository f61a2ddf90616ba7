#!/usr/bin/env bash
# Packs splatsweep and the pipeline executables built here, with the shared libraries they need (except libc and
# the Vulkan loader), into one folder that can be copied to a GPU machine that lacks the project's
# Debian packages. Usage: bench/gpu-bundle.sh [BUILD_DIR] [OUT_DIR]
# On the GPU machine: LD_LIBRARY_PATH=OUT_DIR/lib OUT_DIR/bin/iter_bench ...
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-rel}
out=${2:-.devbundle}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSW_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target splatsweep splat-train iter_bench fwd_bench test_gpu_sort test_gpu_fwd test_gpu_bwd
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
for exe in splatsweep splat-train iter_bench fwd_bench test_gpu_sort test_gpu_fwd test_gpu_bwd; do
  [ -x "$build/bin/$exe" ] && cp "$build/bin/$exe" "$out/bin/"
done
for exe in "$out"/bin/*; do
  ldd "$exe" | awk '/=> \// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|libvulkan|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
# ICU's data library (30 MB, half of the bundle) comes in only through libarchive -> libxml2, whose
# XML reader (libarchive's xar format) none of these programs uses. A stub with its one symbol
# keeps the loader satisfied and the bundle small enough to travel with the Lego (64 MiB a call);
# ICU would report its data missing, not crash, if anything ever asked for it.
for icu in "$out"/lib/libicudata.so.*; do
  [ -e "$icu" ] || continue
  sym=$(nm -D "$icu" | awk '/ R icudt[0-9]+_dat$/ {print $3}')
  [ -n "$sym" ] || continue
  printf 'const char %s[64] = {0};\n' "$sym" >"$out/icu_stub.c"
  cc -shared -fPIC -o "$icu" -Wl,-soname,"$(basename "$icu")" "$out/icu_stub.c"
  rm "$out/icu_stub.c"
done
strip "$out"/bin/*
du -sh "$out"

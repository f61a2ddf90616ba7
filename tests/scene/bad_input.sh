#!/usr/bin/env bash
# bad_input.sh BIN: `splat-train train` refuses broken scenes with exit code 2 and a message
# naming the file: each malformed COLMAP file (truncated binary, unknown or unsupported camera
# model, an image that is missing), a FIFO or a symlink to /dev/zero where an image should be
# (refused without reading: `timeout` only turns a hang into a failure), a folder of no known
# format (the message lists the formats), and transforms.json frames without images (skipped with
# one warning naming them; an error with missing_frames=error). A failed run leaves no
# result.json from an earlier run behind.
set -uo pipefail
BIN=$1
T=$(mktemp -d /tmp/gs_bad.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
gen() { # gen DIR LAYOUT
  "$BIN/splat-train" scene --kind shapes --out "$1" --layout "$2" --lens distorted \
    --train-views 10 --resolution 32 --threads 2 >/dev/null || { echo "FAIL: gen $2"; exit 1; }
}
# expect NAME DIR WORD...: train exits 2 and stderr holds every WORD.
expect() {
  local name=$1 dir=$2
  shift 2
  local out rc
  out=$(timeout 60 "$BIN/splat-train" train --scene "$dir" --out "$T/out" --set iterations=1 \
        --set init_points=100 2>&1 >/dev/null)
  rc=$?
  local ok=1
  [ $rc -eq 2 ] || ok=0
  for w in "$@"; do [[ "$out" == *"$w"* ]] || ok=0; done
  if [ $ok -eq 1 ]; then
    echo "ok   $name: exit $rc: $out"
  else
    echo "FAIL $name: exit $rc (want 2), message '$out' should hold: $*"
    fail=1
  fi
}

gen "$T/bin" colmap-bin
gen "$T/txt" colmap-txt
gen "$T/tf" transforms

# A run that succeeds leaves result.json; the next failing run must remove it.
"$BIN/splat-train" train --scene "$T/bin" --out "$T/out" --set iterations=1 \
  --set init_points=100 >/dev/null 2>&1 || { echo "FAIL: a good scene did not train"; fail=1; }
[ -f "$T/out/result.json" ] || { echo "FAIL: no result.json after a good run"; fail=1; }

for f in cameras images points3D; do
  cp -r "$T/bin" "$T/trunc_$f"
  p="$T/trunc_$f/sparse/0/$f.bin"
  truncate -s $(( $(stat -c %s "$p") * 2 / 3 )) "$p"
  expect "truncated $f.bin" "$T/trunc_$f" "sparse/0/$f.bin" "truncated"
done
[ -f "$T/out/result.json" ] && { echo "FAIL: a failed run left the earlier result.json"; fail=1; }

cp -r "$T/txt" "$T/model"
sed -i 's/ RADIAL / NOT_A_MODEL /' "$T/model/sparse/0/cameras.txt"
expect "unknown camera model" "$T/model" "sparse/0/cameras.txt:3:3" "unknown camera model NOT_A_MODEL"
cp -r "$T/txt" "$T/fisheye"
sed -i 's/^1 RADIAL \([0-9]* [0-9]*\) .*/1 OPENCV_FISHEYE \1 30 16 16 0.1 0 0 0 0/' \
  "$T/fisheye/sparse/0/cameras.txt"
expect "unsupported camera model" "$T/fisheye" "sparse/0/cameras.txt" "OPENCV_FISHEYE is not supported"
cp -r "$T/txt" "$T/badnum"
sed -i 's/^1 RADIAL 32 32 /1 RADIAL 32 32 x/' "$T/badnum/sparse/0/cameras.txt"
expect "bad number" "$T/badnum" "sparse/0/cameras.txt:3:" "camera parameter"

cp -r "$T/bin" "$T/noimg"
rm "$T/noimg/images/img_00003.png"
expect "image missing (binary)" "$T/noimg" "sparse/0/images.bin" "img_00003.png" "no such file"
cp -r "$T/txt" "$T/noimg_txt"
rm "$T/noimg_txt/images/img_00004.png"
expect "image missing (text)" "$T/noimg_txt" "sparse/0/images.txt" "img_00004.png"

cp -r "$T/bin" "$T/fifo"
rm "$T/fifo/images/img_00002.png"
mkfifo "$T/fifo/images/img_00002.png"
expect "FIFO image" "$T/fifo" "img_00002.png" "FIFO"
cp -r "$T/bin" "$T/zero"
ln -sf /dev/zero "$T/zero/images/img_00005.png"
expect "/dev/zero symlink" "$T/zero" "img_00005.png" "outside the scene folder"
cp -r "$T/bin" "$T/zero_meta"
ln -sf /dev/zero "$T/zero_meta/sparse/0/points3D.bin"
expect "/dev/zero as points3D.bin" "$T/zero_meta" "points3D.bin" "outside the scene folder"

mkdir -p "$T/empty"
expect "unknown folder" "$T/empty" "no scene found" "NeRF-synthetic" "COLMAP" "transforms.json"

# transforms.json: a frame without its image is skipped and named once; an error on request.
rm "$T/tf/images/img_00001.png" "$T/tf/images/img_00007.png"
out=$(timeout 120 "$BIN/splat-train" train --scene "$T/tf" --out "$T/out" --set iterations=1 \
      --set init_points=100 2>&1 >/dev/null)
rc=$?
n=$(grep -c "warning:" <<<"$out")
if [ $rc -eq 0 ] && [ "$n" -eq 1 ] && [[ "$out" == *"2 of 10 frames skipped"* ]] &&
   [[ "$out" == *"images/img_00001.png, images/img_00007.png"* ]]; then
  echo "ok   missing frames skipped: $out"
else
  echo "FAIL missing frames: exit $rc, $n warnings: $out"
  fail=1
fi
timeout 60 "$BIN/splat-train" train --scene "$T/tf" --out "$T/out" --set iterations=1 \
  --set missing_frames=error >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "img_00001.png: no such file" "$T/err"; then
  echo "ok   missing_frames=error: $(cat "$T/err")"
else
  echo "FAIL missing_frames=error: exit $rc: $(cat "$T/err")"
  fail=1
fi

# Views of different sizes (two COLMAP cameras) train: per-view ground truth and loss images.
cp -r "$T/txt" "$T/mixed"
echo "2 PINHOLE 16 24 20 20 8 12" >>"$T/mixed/sparse/0/cameras.txt"
awk '!/^#/ && NF >= 10 && $1 % 2 == 0 { $9 = 2 } { print }' "$T/mixed/sparse/0/images.txt" \
  >"$T/mixed/images.new" && mv "$T/mixed/images.new" "$T/mixed/sparse/0/images.txt"
python3 - "$T/mixed" <<'PY'
import struct, sys, zlib
def png(path, w, h):
    raw = b"".join(b"\x00" + bytes([120, 80, 200]) * w for _ in range(h))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
                           chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
for i in range(1, 10, 2):  # image ids 2, 4, ... hold img_00001, img_00003, ...
    png("%s/images/img_%05d.png" % (sys.argv[1], i), 16, 24)
PY
if out=$(timeout 120 "$BIN/splat-train" train --scene "$T/mixed" --out "$T/out-mixed" \
         --set iterations=20 --set init_points=200 2>&1) &&
   [[ "$out" == *"held-out PSNR"* ]] && [ -f "$T/out-mixed/result.json" ]; then
  echo "ok   views of two sizes train: $out"
else
  echo "FAIL views of two sizes: $out"
  fail=1
fi
exit $fail

#!/usr/bin/env bash
# formats_psnr.sh BIN: the same generated scene in four layouts trains to the same held-out PSNR.
# The NeRF-synthetic layout has a pinhole lens; the COLMAP binary, COLMAP text and transforms.json
# layouts have an off-centre principal point and radial distortion (gs_gen.h), which the loader
# must read and undistort for the views to line up with the poses. Every run has the same seed,
# views, held-out split (every 8th) and random init (a cube around the origin, so that the scenes'
# different init defaults do not enter), so the PSNRs may differ only by what the lens costs:
# the resampling of undistortion and the slightly different framing. Passes within 0.3 dB.
set -euo pipefail
BIN=$1
T=$(mktemp -d /tmp/gs_formats.XXXXXX)
trap 'rm -rf "$T"' EXIT
common=(--set iterations=150 --set init=random --set init_box=extent --set init_extent=0.15
        --set scene_normalize=off --set init_points=3000)
declare -A psnr
for layout in nerf colmap-bin colmap-txt transforms; do
  lens=distorted
  [ "$layout" = nerf ] && lens=pinhole
  "$BIN/splat-train" scene --kind shapes --out "$T/$layout" --layout "$layout" --lens "$lens" \
    --train-views 24 --test-views 0 --resolution 64 --threads 2 >/dev/null
  "$BIN/splat-train" train --scene "$T/$layout" --out "$T/out-$layout" "${common[@]}" >/dev/null
  psnr[$layout]=$(jq -r '.metrics.psnr_db' "$T/out-$layout/result.json")

  echo "$layout ($lens): held-out PSNR ${psnr[$layout]} dB"
done
fail=0
for layout in colmap-bin colmap-txt transforms; do
  if ! awk -v a="${psnr[$layout]}" -v b="${psnr[nerf]}" \
       'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.3) }'; then
    echo "FAIL: $layout ${psnr[$layout]} dB vs nerf ${psnr[nerf]} dB differ by more than 0.3 dB"
    fail=1
  fi
done
exit $fail

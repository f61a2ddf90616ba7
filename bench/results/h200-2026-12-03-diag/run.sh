#!/usr/bin/env bash
# device: 10 concurrent 8,000-iteration Lego trainings under a CPU hog with densify diagnostics
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/splat-train devices 2>&1 | head -3
W=/tmp/rw
ITERS=8000 CHECKPOINTS=6000 HOG=1 timeout 390 bash bench/runaway.sh $B/splat-train $W \
  f1:rasterize_bwd=splat f2:rasterize_bwd=splat f3:rasterize_bwd=splat f4:rasterize_bwd=splat \
  f5:rasterize_bwd=splat f6:rasterize_bwd=splat f7:rasterize_bwd=splat \
  p1:rasterize_bwd=pixel p2:rasterize_bwd=pixel p3:rasterize_bwd=pixel > $OUT/summary.txt 2>&1
pkill -f splat-train; pkill -f 'while :'; sleep 1
cat $OUT/summary.txt
cd $W && for f in *.log; do grep -E "densify|ERROR|WARN" $f > /tmp/d-$f; done
cd /tmp && tar cJf $OUT/diag.tar.xz d-*.log rw/*/result.json
ls -la $OUT

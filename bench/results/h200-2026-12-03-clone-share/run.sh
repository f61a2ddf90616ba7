#!/usr/bin/env bash
# device: 10 concurrent 10,000-iteration Lego trainings under a CPU hog, clone_opacity share x5 beside copy x5
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
W=/tmp/rw
ITERS=10000 CHECKPOINTS=7000 HOG=1 timeout 560 bash bench/runaway.sh $B/splat-train $W \
  s1:rasterize_bwd=splat,clone_opacity=share s2:rasterize_bwd=splat,clone_opacity=share \
  s3:rasterize_bwd=splat,clone_opacity=share s4:rasterize_bwd=splat,clone_opacity=share \
  s5:rasterize_bwd=splat,clone_opacity=share \
  c1:rasterize_bwd=splat,clone_opacity=copy c2:rasterize_bwd=splat,clone_opacity=copy \
  c3:rasterize_bwd=splat,clone_opacity=copy c4:rasterize_bwd=splat,clone_opacity=copy \
  c5:rasterize_bwd=splat,clone_opacity=copy > $OUT/summary.txt 2>&1
pkill -f splat-train; pkill -f 'while :'; sleep 1
cat $OUT/summary.txt
cd $W && for f in *.log; do grep -E "densify|ERROR|WARN" $f > /tmp/d-$f; done
for d in */; do cp $d/result.json /tmp/r-${d%/}.json 2>/dev/null; done
cd /tmp && tar cJf $OUT/diag.tar.xz d-*.log r-*.json
ls -la $OUT

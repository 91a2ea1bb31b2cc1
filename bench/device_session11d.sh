#!/usr/bin/env bash
# Session 11's fourth device call, one machine start, from a `git archive` snapshot in .snap/
# (carry [".whl", ".snap"]); everything comes back as $OUT/d.tar:
#   1. the grid-stride skills' GPU tests (golden rewrites against their originals);
#   2. the dot_atomic lineage walked on the GPU (full gate), then klc learn over every walk;
#   3. bench/quality.py on the transfer kernels the grid-stride skills reach and on the
#      lineages that use them, with the skills just learned.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/.snap KLC_CACHE_DIR=$PWD/.klc-cache
cd .snap || exit 1
mkdir -p "$OUT/d/walks" "$OUT/d/skills" "$OUT/d/golden"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/d/device.txt"
start=$(date +%s)
timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gate/test_grid_stride_gpu.py \
  > "$OUT/d/gpu_tests.txt" 2>&1
echo "gpu tests: rc $? at $(( $(date +%s) - start )) s"
f=dot_atomic
timeout 45 python3 -m klc lineage "bench/lineages/$f/expert.cu" --out "$OUT/d/walks/$f" \
  > "$OUT/d/walks/$f.log" 2>&1 && rm -rf "bench/lineages/$f/walk" \
  && cp -r "$OUT/d/walks/$f" "bench/lineages/$f/walk"
echo "walk $f: rc $? at $(( $(date +%s) - start )) s"
timeout 60 python3 -m klc learn bench/lineages/*/walk --out "$OUT/d/skills" \
  --golden "$OUT/d/golden" > "$OUT/d/learn.log" 2>&1 \
  && cp "$OUT"/d/skills/* skills/ && echo "learned at $(( $(date +%s) - start )) s"
timeout 120 python3 bench/quality.py --no-lineages --no-heldout --transfer --budget 8 \
  --kernel "dot_product_atomic,histogram_float,bincount_labels" --out "$OUT/d/transfer" \
  > "$OUT/d/transfer.log" 2>&1
echo "transfer: rc $? at $(( $(date +%s) - start )) s"
timeout 90 python3 bench/quality.py --no-heldout --budget 6 --family dot_atomic \
  --family reduce_sum --family label_count --out "$OUT/d/lineages" > "$OUT/d/lineages.log" 2>&1
echo "lineages: rc $? at $(( $(date +%s) - start )) s"
tar -cf "$OUT/d.tar" -C "$OUT" d && rm -rf "$OUT/d"

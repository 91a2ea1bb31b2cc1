#!/usr/bin/env bash
# Session 11's second device call, one machine start, from a `git archive` snapshot in .snap/
# (carry [".whl", ".snap"]); everything comes back as $OUT/b.tar:
#   1. the column lineages walked again on the GPU (full gate), their experts now 32 x 32;
#   2. klc learn over every walk (skills, measurements, golden cases);
#   3. bench/quality.py on the whole transfer set with those skills (budget 8), the optimize
#      loop now comparing a winning recipe with the round's own moves.
#   bash bench/device_session11b.sh
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/.snap KLC_CACHE_DIR=$PWD/.klc-cache
cd .snap || exit 1
mkdir -p "$OUT/b/walks" "$OUT/b/skills" "$OUT/b/golden"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/b/device.txt"
start=$(date +%s)
for f in column_sum column_norm column_stats column_grads; do
  timeout 45 python3 -m klc lineage "bench/lineages/$f/expert.cu" --out "$OUT/b/walks/$f" \
    > "$OUT/b/walks/$f.log" 2>&1 && rm -rf "bench/lineages/$f/walk" \
    && cp -r "$OUT/b/walks/$f" "bench/lineages/$f/walk"
  echo "walk $f: rc $? at $(( $(date +%s) - start )) s"
done
timeout 60 python3 -m klc learn bench/lineages/*/walk --out "$OUT/b/skills" \
  --golden "$OUT/b/golden" > "$OUT/b/learn.log" 2>&1 \
  && cp "$OUT"/b/skills/* skills/ && echo "learned at $(( $(date +%s) - start )) s"
timeout 330 python3 bench/quality.py --no-lineages --no-heldout --transfer --budget 8 \
  --out "$OUT/b/transfer" > "$OUT/b/transfer.log" 2>&1
echo "transfer: rc $? at $(( $(date +%s) - start )) s"
tar -cf "$OUT/b.tar" -C "$OUT" b && rm -rf "$OUT/b"

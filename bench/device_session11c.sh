#!/usr/bin/env bash
# Session 11's third device call, one machine start, from a `git archive` snapshot in .snap/
# (carry [".whl", ".snap"]); everything comes back as $OUT/c.tar. The committed skills, the
# optimize loop comparing a winning recipe with the round's moves, launch-relative holes:
#   1. bench/quality.py on the whole transfer set (budget 8, headroom ranking);
#   2. bench/quality.py on every lineage (budget 6), against its expert.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/.snap KLC_CACHE_DIR=$PWD/.klc-cache
cd .snap || exit 1
mkdir -p "$OUT/c"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/c/device.txt"
start=$(date +%s)
timeout 330 python3 bench/quality.py --no-lineages --no-heldout --transfer --budget 8 \
  --out "$OUT/c/transfer" > "$OUT/c/transfer.log" 2>&1
echo "transfer: rc $? at $(( $(date +%s) - start )) s"
timeout 240 python3 bench/quality.py --no-heldout --budget 6 --out "$OUT/c/lineages" \
  > "$OUT/c/lineages.log" 2>&1
echo "lineages: rc $? at $(( $(date +%s) - start )) s"
tar -cf "$OUT/c.tar" -C "$OUT" c && rm -rf "$OUT/c"

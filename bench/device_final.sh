#!/usr/bin/env bash
# Session 10's last device call, one machine start: walk the named lineages on the GPU (full
# gate), learn the skills from all walks, then measure klc optimize on the transfer set and
# the lineages (bench/quality.py) with those skills. From a `git archive` snapshot in .snap/
# (carry [".whl", ".snap"]); everything comes back as $OUT/final.tar (walks, skills, results).
#   bash bench/device_final.sh BUDGET FAMILY...
set -u
budget=$1; shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/.snap KLC_CACHE_DIR=$PWD/.klc-cache
cd .snap || exit 1
mkdir -p "$OUT/r/walks" "$OUT/r/skills" "$OUT/r/golden"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/r/device.txt"
start=$(date +%s)
for f in "$@"; do
  timeout 40 python3 -m klc lineage "bench/lineages/$f/expert.cu" --out "$OUT/r/walks/$f" \
    > "$OUT/r/walks/$f.log" 2>&1 && rm -rf "bench/lineages/$f/walk" \
    && cp -r "$OUT/r/walks/$f" "bench/lineages/$f/walk"
  echo "walk $f: rc $? at $(( $(date +%s) - start )) s"
done
timeout 60 python3 -m klc learn bench/lineages/*/walk --out "$OUT/r/skills" \
  --golden "$OUT/r/golden" > "$OUT/r/learn.log" 2>&1 \
  && cp "$OUT"/r/skills/* skills/ && echo "learned at $(( $(date +%s) - start )) s"
timeout 180 python3 bench/quality.py --no-lineages --no-heldout --transfer \
  --budget "$budget" --out "$OUT/r/transfer" > "$OUT/r/transfer.log" 2>&1
echo "transfer: rc $? at $(( $(date +%s) - start )) s"
timeout 45 python3 bench/quality.py --no-heldout --budget "$budget" --out "$OUT/r/lineages" \
  > "$OUT/r/lineages.log" 2>&1
echo "lineages: rc $? at $(( $(date +%s) - start )) s"
tar -cf "$OUT/final.tar" -C "$OUT" r && rm -rf "$OUT/r"

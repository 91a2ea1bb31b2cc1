#!/usr/bin/env bash
# Every lineage walked on the device machine's GPU (full gate: compile, verify, profile), from
# a `git archive` snapshot in .snap/ (carry [".whl", ".snap"]), through the device tool:
#   bash bench/device_walks.sh [FAMILY...]      (default: every bench/lineages/*/expert.cu)
# Each walk goes to $OUT/<family>/ (lineage.json, vNN_*.cu, report.md); copy them over
# bench/lineages/<family>/walk/ and run `klc learn` here (docs/lineage.md).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/.snap KLC_CACHE_DIR=$PWD/.klc-cache
cd .snap || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
families=("$@")
[ ${#families[@]} -eq 0 ] && families=($(ls bench/lineages))
for f in "${families[@]}"; do
  [ -f "bench/lineages/$f/expert.cu" ] || continue
  start=$(date +%s)
  python3 -m klc lineage "bench/lineages/$f/expert.cu" --out "$OUT/$f" > "$OUT/$f.log" 2>&1
  echo "$f: rc $? in $(( $(date +%s) - start )) s: $(tail -n 1 "$OUT/$f.log")"
done

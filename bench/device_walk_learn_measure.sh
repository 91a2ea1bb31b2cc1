#!/usr/bin/env bash
# One device call: walk lineages on the GPU, learn the skills from every walk, then measure
# klc optimize on lineages and transfer kernels, within a deadline. Run from a `git archive`
# snapshot (the repository root), with the wheels of .whl, as the device tool runs it:
#
#   bash bench/device_walk_learn_measure.sh WALK LINEAGES KERNELS_FIRST [DEADLINE_S]
#
#   WALK           comma-separated families of bench/lineages whose walks are made again
#   LINEAGES       comma-separated families that bench/quality.py measures against their experts
#   KERNELS_FIRST  comma-separated globs of bench/transfer kernels measured first; the rest of
#                  the transfer set follows while the deadline allows (quality.py writes its
#                  results after every kernel, so a cut leaves the rows it measured)
#   DEADLINE_S     seconds from the start for all of it (default 380)
#
# Everything comes back as one file, $OUT/results.tar (the device tool returns a few files
# only): the walks, the skills learned from them, and each quality.py run's results.json /
# results.md, with its log.
set -u
walk=$1 lineages=$2 first=$3 deadline=${4:-380}
start=$(date +%s)
final=$OUT
OUT=$(mktemp -d)
trap 'tar -cf "$final/results.tar" -C "$OUT" .' EXIT
left() { echo $(( deadline - ($(date +%s) - start) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD KLC_CACHE_DIR=/tmp/klc-cache
mkdir -p "$OUT/walks" "$OUT/skills"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
for fam in ${walk//,/ }; do
  rm -rf "bench/lineages/$fam/walk"
  timeout "$(left)" python3 -m klc lineage "bench/lineages/$fam/expert.cu" \
    --out "bench/lineages/$fam/walk" > "$OUT/walks/$fam.log" 2>&1
  echo "walk $fam: rc $? at $(( $(date +%s) - start )) s"
  cp -r "bench/lineages/$fam/walk" "$OUT/walks/$fam"
done
timeout "$(left)" python3 -m klc learn bench/lineages/*/walk --out skills \
  > "$OUT/skills/learn.log" 2>&1
echo "learn: rc $? at $(( $(date +%s) - start )) s"
cp skills/*.rule skills/measurements.json skills/recipes.yaml "$OUT/skills/"
fams=""
for fam in ${lineages//,/ }; do fams="$fams --family $fam"; done
timeout "$(( $(left) * 1 / 4 ))" python3 bench/quality.py --no-heldout --budget 6 $fams \
  --out "$OUT/lineages" > "$OUT/lineages.log" 2>&1
echo "lineages: rc $? at $(( $(date +%s) - start )) s"
timeout "$(left)" python3 bench/quality.py --no-lineages --no-heldout --transfer --budget 8 \
  --kernel "$first" --out "$OUT/transfer_first" > "$OUT/transfer_first.log" 2>&1
echo "transfer (first): rc $? at $(( $(date +%s) - start )) s"
if [ "$(left)" -gt 20 ]; then
  rest=$(python3 - "$first" <<'PY'
import fnmatch, pathlib, sys
globs = sys.argv[1].split(",")
names = sorted(p.stem for p in pathlib.Path("bench/transfer").glob("*.cu"))
print(",".join(n for n in names if not any(fnmatch.fnmatch(n, g) for g in globs)))
PY
)
  timeout "$(left)" python3 bench/quality.py --no-lineages --no-heldout --transfer --budget 8 \
    --kernel "$rest" --out "$OUT/transfer_rest" > "$OUT/transfer_rest.log" 2>&1
  echo "transfer (rest): rc $? at $(( $(date +%s) - start )) s"
fi

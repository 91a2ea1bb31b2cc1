#!/usr/bin/env bash
# The GPU half of a klc session, as run on the device machine (an H100 or H200) from the
# repository root, with the parser wheels carried in .whl/ (see ../shared/device/wheels.sh):
#   bash bench/gpu_session.sh OUT_DIR [tests|walks|quality|all]...
# tests   - every @pytest.mark.gpu test, then bench/gate_speed.py
# walks   - klc lineage on the five expert families, with the full gate
# quality - bench/quality.py (optimize the lineages' naive ends and the held-out kernels)
# Results land in OUT_DIR; learn the skills afterwards on a machine with matplotlib:
#   klc learn bench/lineages/*/walk --out skills --golden tests/golden
set -uo pipefail
out=${1:?usage: bench/gpu_session.sh OUT_DIR [tests|walks|quality|all]...}
shift
mkdir -p "$out"
what=("$@")
[ ${#what[@]} -eq 0 ] && what=(all)
want() { for w in "${what[@]}"; do [ "$w" = "$1" ] || [ "$w" = all ] && return 0; done; return 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
export KLC_CACHE_DIR="${KLC_CACHE_DIR:-/tmp/klc-cache}"
if want tests; then
  python3 -m pytest -m gpu -q -p no:cacheprovider --durations=10 2>&1 | tail -40 | tee "$out/gpu_tests.txt"
  python3 bench/gate_speed.py 2>&1 | tee "$out/gate_speed.txt"
fi
if want walks; then
  for f in reduce_sum transpose layernorm softmax sgemm label_count row_standardize; do
    start=$(date +%s)
    python3 -m klc lineage "bench/lineages/$f/expert.cu" --out "$out/walk/$f" \
      > "$out/walk_$f.log" 2>&1
    echo "$f: exit $? in $(( $(date +%s) - start )) s" | tee -a "$out/walks.txt"
    tail -25 "$out/walk_$f.log"
  done
fi
if want quality; then
  python3 bench/quality.py --out "$out/quality" 2>&1 | tail -60 | tee "$out/quality.txt"
fi

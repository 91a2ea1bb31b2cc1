#!/usr/bin/env bash
# Benchmarks and GPU tests on the device machine, in one start, through the device tool.
#
#   bash bench/device.sh STEP [ARG...] [-- STEP [ARG...]]...
#
# Run from the repository root with carry [".whl", ".snap"] (and ".corpus" for `soundness`):
# .whl/ holds the parser stack, orjson, CUDA's header wheels and whatever else the steps
# import (hypothesis for `fuzz`), .snap/ is `git archive` of the commit under test, so that a run
# sees one commit whatever the working tree holds (without .snap/ the working tree is used).
# Every step writes under $OUT/<step>/ (its log, its figures); $OUT/device.txt names the GPU.
# A step is stopped after $STEP_SECONDS (default 300) and the next one still runs.
#
# Steps:
#   tests [PYTEST_ARG...]       the GPU tests (pytest -m gpu; default every test folder)
#   walk [FAMILY...]            klc lineage on bench/lineages/FAMILY/expert.cu with the full
#                               gate (default every family); each walk replaces the snapshot's
#                               bench/lineages/FAMILY/walk/, so a later `learn` reads it
#   learn                       klc learn over every walk; the skills replace the snapshot's
#                               skills/, so a later `quality` uses them
#   quality NAME [ARG...]       bench/quality.py ARG... --out $OUT/quality/NAME
#   script NAME [ARG...]        python3 bench/NAME.py ARG... (gate_speed, column_shapes,
#                               gate_profile_size, spec_init_heldout, gate_lineages, ...)
#   soundness [SECONDS]         bench/soundness.py over .corpus/corpus.tar.xz (the sources,
#                               headers and manifest.json of bench/real_corpus.py's corpus),
#                               resuming from .corpus/cache.tar when an earlier call left one;
#                               the compile cache comes back as $OUT/soundness/cache.tar
#   fuzz KINDS PROCS COUNT SEED bench/fuzz.py in PROCS processes per kind (KINDS comma
#                               separated), each --count COUNT --chunk 50 from its own seed
#                               (SEED + 1000*kind + 100*process); the chunks that end in time
#                               are summed into $OUT/fuzz/fuzz.jsonl
#
# Example: walk two families, learn, then measure the transfer set with those skills:
#   bash bench/device.sh walk column_sum column_norm -- learn \
#     -- quality transfer --no-lineages --no-heldout --transfer --budget 8
set -u
: "${OUT:?OUT must name the folder for results}"
step_seconds=${STEP_SECONDS:-300}
root=$PWD
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target "$root/.site" .whl/*.whl || exit 1
fi
src=$root
[ -d .snap ] && src=$root/.snap
export PYTHONPATH=$root/.site:$src KLC_CACHE_DIR=${KLC_CACHE_DIR:-$root/.klc-cache}
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  > "$OUT/device.txt" 2>&1
start=$(date +%s)

run_step() {
  local name=$1; shift
  local dir=$OUT/$name
  mkdir -p "$dir"
  case $name in
    tests)
      [ $# -eq 0 ] && set -- tests/
      timeout "$step_seconds" python3 -m pytest -q -m gpu -p no:cacheprovider "$@" \
        > "$dir/gpu_tests.txt" 2>&1 ;;
    walk)
      [ $# -eq 0 ] && set -- $(ls bench/lineages)
      local f
      for f in "$@"; do
        [ -f "bench/lineages/$f/expert.cu" ] || { echo "walk: no family $f"; continue; }
        timeout "$step_seconds" python3 -m klc lineage "bench/lineages/$f/expert.cu" \
          --out "$dir/$f" > "$dir/$f.log" 2>&1 && rm -rf "bench/lineages/$f/walk" \
          && cp -r "$dir/$f" "bench/lineages/$f/walk"
        echo "walk $f: rc $? at $(( $(date +%s) - start )) s"
      done
      return 0 ;;
    learn)
      mkdir -p "$dir/skills" "$dir/golden"
      timeout "$step_seconds" python3 -m klc learn bench/lineages/*/walk --out "$dir/skills" \
        --golden "$dir/golden" > "$dir/learn.log" 2>&1 && cp "$dir"/skills/* skills/ ;;
    quality)
      local label=${1:?quality needs a NAME}; shift
      timeout "$step_seconds" python3 bench/quality.py "$@" --out "$dir/$label" \
        > "$dir/$label.log" 2>&1 ;;
    script)
      local script=${1:?script needs a NAME}; shift
      timeout "$step_seconds" python3 "bench/$script.py" "$@" > "$dir/$script.txt" 2>&1 ;;
    soundness)
      local limit=${1:-$step_seconds}
      mkdir -p "$root/corpus" "$KLC_CACHE_DIR" \
        && tar -xJf "$root/.corpus/corpus.tar.xz" -C "$root/corpus" || return 1
      [ -f "$root/.corpus/cache.tar" ] && tar -xf "$root/.corpus/cache.tar" -C "$KLC_CACHE_DIR"
      command -v nvcc > /dev/null && nvcc --version | tail -n 2 > "$dir/nvcc.txt"
      timeout "$limit" python3 bench/soundness.py "$root/corpus" -j "$(nproc)" \
        --json "$dir/soundness.json" --md "$dir/soundness.md" > "$dir/soundness.log" 2>&1
      local rc=$?
      tar -cf "$dir/cache.tar" -C "$KLC_CACHE_DIR" soundness
      return $rc ;;
    fuzz)
      local kinds=${1:-kernel,spec} procs=${2:-8} count=${3:-1250} base=${4:-10000}
      local k=0 kind i
      for kind in ${kinds//,/ }; do
        for i in $(seq 0 $((procs - 1))); do
          timeout "$step_seconds" python3 bench/fuzz.py --count "$count" --kinds "$kind" \
            --chunk 50 --seed $((base + 1000 * k + 100 * i)) \
            --jsonl "$dir/fuzz_${kind}_$i.jsonl" > "$dir/log_${kind}_$i.txt" 2>&1 &
        done
        k=$((k + 1))
      done
      wait
      cat "$dir"/fuzz_*_*.jsonl > "$dir/fuzz.jsonl"
      python3 bench/fuzz.py --summarize "$dir/fuzz.jsonl" | tail -n 8 ;;
  esac
}

[ $# -eq 0 ] && { sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
first=1
for a in "$@"; do  # every step's name checked before anything runs
  if [ $first = 1 ]; then
    case $a in
      tests|walk|learn|quality|script|soundness|fuzz) ;;
      *) echo "bench/device.sh: unknown step '$a' (tests, walk, learn, quality, script," \
           "soundness, fuzz)" >&2; exit 2 ;;
    esac
  fi
  first=0; [ "$a" = -- ] && first=1
done
status=0
while [ $# -gt 0 ]; do
  args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  [ ${#args[@]} -eq 0 ] && continue
  run_step "${args[@]}"
  rc=$?
  echo "${args[0]}: rc $rc at $(( $(date +%s) - start )) s"
  [ $rc -ne 0 ] && status=1
done
exit $status

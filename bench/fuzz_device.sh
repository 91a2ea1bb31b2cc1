#!/usr/bin/env bash
# The long fuzz profile (issue 21) spread over the device machine's CPU cores, through the
# device tool: carry [".whl", ".snap"], where .snap/ is `git archive` of the commit under test
# (so that the run sees one commit, whatever the working tree holds) and .whl/ the parser stack,
# CUDA's header wheels and hypothesis (+ attrs, sortedcontainers).
#   bash bench/fuzz_device.sh KINDS PROCS COUNT SEED_BASE
# runs PROCS processes per kind, each `bench/fuzz.py --count COUNT --chunk 50` with its own
# seed range (SEED_BASE + 1000*kind_index + 100*process), appending each chunk's tally to
# $OUT/fuzz.jsonl; whatever chunks end before the time limit count. Summarize with
# `python bench/fuzz.py --summarize fuzz.jsonl`.
set -u
kinds=${1:-kernel,spec}; procs=${2:-8}; count=${3:-1250}; base=${4:-10000}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl && export PYTHONPATH=$PWD/.site:$PWD/.snap || exit 1
export KLC_CACHE_DIR=$PWD/.klc-cache
cd .snap || exit 1
nproc > "$OUT/nproc.txt"
k=0
for kind in ${kinds//,/ }; do
  for i in $(seq 0 $((procs - 1))); do
    seed=$((base + 1000 * k + 100 * i))
    timeout 560 python3 bench/fuzz.py --count "$count" --kinds "$kind" --chunk 50 \
      --seed "$seed" --jsonl "$OUT/fuzz_${kind}_$i.jsonl" > "$OUT/log_${kind}_$i.txt" 2>&1 &
  done
  k=$((k + 1))
done
wait
cat "$OUT"/fuzz_*.jsonl > "$OUT/fuzz.jsonl"
python3 bench/fuzz.py --summarize "$OUT/fuzz.jsonl" | tail -n 8

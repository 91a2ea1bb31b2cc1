#!/usr/bin/env bash
# Session 10's first device call: every GPU test (-m gpu) of the working tree, and beside it
# bench/soundness.py over the whole package corpus at the commit in .snap/ (see
# bench/soundness_device.sh for what .snap/, .corpus/ and .whl/ hold). Both under $OUT.
#   bash bench/device_session10.sh [SECONDS]
set -u
limit=${1:-530}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl || exit 1
export KLC_CACHE_DIR=$PWD/.klc-cache
mkdir -p corpus "$KLC_CACHE_DIR" && tar -xJf .corpus/corpus.tar.xz -C corpus || exit 1
[ -f .corpus/cache.tar ] && tar -xf .corpus/cache.tar -C "$KLC_CACHE_DIR"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
nvcc --version | tail -n 2 > "$OUT/nvcc.txt"
( PYTHONPATH=$PWD/.site:$PWD/.snap timeout "$limit" python3 .snap/bench/soundness.py \
    "$PWD/corpus" -j 11 --json "$OUT/soundness.json" --md "$OUT/soundness.md" \
    > "$OUT/soundness.log" 2>&1; echo "rc $?" >> "$OUT/soundness.log" ) &
( PYTHONPATH=$PWD/.site:$PWD timeout "$limit" python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/ > "$OUT/gpu_tests.txt" 2>&1; echo "rc $?" >> "$OUT/gpu_tests.txt" ) &
wait
tar -cf "$OUT/cache.tar" -C "$KLC_CACHE_DIR" soundness
tail -n 40 "$OUT/gpu_tests.txt"
tail -n 25 "$OUT/soundness.log"

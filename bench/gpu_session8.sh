#!/usr/bin/env bash
# Session 8's device run: every GPU test (-m gpu) with this session's changes, on the device
# machine through the device tool (carry [".whl"]: the parser stack and CUDA's header wheels).
# Results under $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl && export PYTHONPATH=$PWD/.site:$PWD || exit 1
export KLC_CACHE_DIR=$PWD/.klc-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
timeout 540 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/ \
  > "$OUT/gpu_tests.txt" 2>&1
tail -n 30 "$OUT/gpu_tests.txt"

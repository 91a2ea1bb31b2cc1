#!/usr/bin/env bash
# Issue 19, third device run: the bf16/fp16 tests, the held-out kernels' GPU tests (their
# hand-written specs through the gate, the check at the profiling size included), the
# drafted specs gated again, the GPU tests of the check at the profiling size. Results under
# $OUT. Carry [".whl"] (see bench/gpu_issue19.sh).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl && export PYTHONPATH=$PWD/.site:$PWD || exit 1
export KLC_CACHE_DIR=$PWD/.klc-cache
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_bf16.py \
  tests/test_gate_profile_size_gpu.py > "$OUT/bf16_tests.txt" 2>&1
timeout 220 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_heldout.py \
  > "$OUT/heldout_gpu.txt" 2>&1
timeout 150 python3 bench/spec_init_heldout.py --json "$OUT/spec_init.json" \
  > "$OUT/spec_init.txt" 2>&1
for f in "$OUT"/*.txt; do echo "== $f"; tail -n 6 "$f"; done

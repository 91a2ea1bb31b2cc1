#!/usr/bin/env bash
# Issue 19, second device run: bf16 end to end (gate, a reordered reduction, a wrong weight,
# klc optimize), the optimize GPU test, and the check at the profiling size measured again
# (with where its time goes). Results under $OUT. Carry [".whl"] (see bench/gpu_issue19.sh).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl && export PYTHONPATH=$PWD/.site:$PWD || exit 1
export KLC_CACHE_DIR=$PWD/.klc-cache
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_bf16.py \
  "tests/test_optimize.py::test_optimize_sigmoid_on_the_gpu" > "$OUT/bf16_tests.txt" 2>&1
timeout 150 python3 bench/gate_profile_size.py --trials 4 --json "$OUT/profile_size.json" \
  > "$OUT/profile_size.txt" 2>&1
for f in "$OUT"/*.txt; do echo "== $f"; tail -n 12 "$f"; done

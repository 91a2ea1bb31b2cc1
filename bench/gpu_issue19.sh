#!/usr/bin/env bash
# Issue 19 on the device machine: the GPU tests of the gate's check at the profiling size (and
# the gate's GPU tests as a regression check), the header tests, and two measurements: drafted
# specs gated without edits (bench/spec_init_heldout.py) and what the check at the profiling
# size adds per trial (bench/gate_profile_size.py). Results under $OUT.
# Run with carry [".whl"] after `bash ../shared/device/wheels.sh tree-sitter tree-sitter-cuda
# lark libclang nvidia-cuda-cccl nvidia-cuda-runtime nvidia-cuda-crt`.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl && export PYTHONPATH=$PWD/.site:$PWD || exit 1
export KLC_CACHE_DIR=$PWD/.klc-cache
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import cupy; from cupy_backends.cuda.libs import nvrtc; print('cupy', cupy.__version__, 'nvrtc', nvrtc.getVersion())"
  python3 -c "from klc.gate.compile import include_dirs; print(include_dirs())"
} > "$OUT/env.txt" 2>&1
timeout 260 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gate_profile_size_gpu.py \
  tests/test_gate_gpu.py > "$OUT/gpu_tests.txt" 2>&1
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_gate_headers.py \
  tests/test_gate_profile_size.py > "$OUT/cpu_tests.txt" 2>&1
timeout 150 python3 bench/spec_init_heldout.py --json "$OUT/spec_init.json" > "$OUT/spec_init.txt" 2>&1
timeout 120 python3 bench/gate_profile_size.py --trials 4 --json "$OUT/profile_size.json" \
  > "$OUT/profile_size.txt" 2>&1
tail -3 "$OUT"/*.txt

#!/usr/bin/env bash
# bench/soundness.py over the whole package corpus on the device machine (16 cores, nvcc 13.0),
# through the device tool: carry [".whl", ".snap", ".corpus"], where .snap/ is `git archive` of
# the commit under test, .whl/ the parser stack and CUDA's header wheels, and .corpus/ holds
# corpus.tar.xz (the sources, headers and manifest.json of `python bench/real_corpus.py`'s
# corpus: find ~/.cache/klc/corpus -name '*.cu' -o -name '*.cuh' -o -name '*.h' ... | tar | xz)
# and, from an earlier call, cache.tar (the compile cache, so a second call resumes).
#   bash bench/soundness_device.sh [SECONDS]
# The run's table goes to $OUT/soundness.md and every case to $OUT/soundness.json; the compile
# cache comes back as $OUT/cache.tar whether or not the run ended in time.
set -u
limit=${1:-540}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl && export PYTHONPATH=$PWD/.site:$PWD/.snap || exit 1
export KLC_CACHE_DIR=$PWD/.klc-cache
mkdir -p corpus "$KLC_CACHE_DIR" && tar -xJf .corpus/corpus.tar.xz -C corpus || exit 1
[ -f .corpus/cache.tar ] && tar -xf .corpus/cache.tar -C "$KLC_CACHE_DIR"
nvcc --version | tail -n 2 > "$OUT/nvcc.txt"
timeout "$limit" python3 .snap/bench/soundness.py "$PWD/corpus" -j "$(nproc)" \
  --json "$OUT/soundness.json" --md "$OUT/soundness.md" > "$OUT/soundness.log" 2>&1
echo "rc $?" >> "$OUT/soundness.log"
tar -cf "$OUT/cache.tar" -C "$KLC_CACHE_DIR" soundness
tail -n 25 "$OUT/soundness.log"

#!/usr/bin/env bash
# Session 11's first device call, one machine start, from a `git archive` snapshot in .snap/
# (carry [".whl", ".snap"]); everything comes back as $OUT/a.tar:
#   1. bench/column_shapes.py: which block shape a column expert should use;
#   2. bench/quality.py on the lineages not measured in session 10 (klc optimize from each
#      lineage's naive end, against its expert);
#   3. the transfer kernels at or above NEAR_SOL (75%), with and without the headroom tiers,
#      in one process each, to measure what skipping structural skills there costs.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/.snap KLC_CACHE_DIR=$PWD/.klc-cache
cd .snap || exit 1
mkdir -p "$OUT/a"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/a/device.txt"
start=$(date +%s)
timeout 60 python3 bench/column_shapes.py > "$OUT/a/column_shapes.txt" 2>&1
echo "column shapes: rc $? at $(( $(date +%s) - start )) s"
fam=""
for f in elementwise gemv_bias_rows grid_reduce matmul_regblock matmul_tiled \
    softmax_block_rows transpose_tile layernorm reduce_sum row_standardize softmax sgemm \
    label_count transpose; do fam="$fam --family $f"; done
timeout 200 python3 bench/quality.py --no-heldout --budget 6 $fam --out "$OUT/a/lineages" \
  > "$OUT/a/lineages.log" 2>&1
echo "lineages: rc $? at $(( $(date +%s) - start )) s"
near="adamw_update,causal_softmax_inplace,jacobi_3d_7pt,layernorm_block_row,leaky_relu_backward,permute_qkv,residual_add"
for mode in headroom no-headroom; do
  flag=""; [ $mode = no-headroom ] && flag=--no-headroom
  timeout 90 python3 bench/quality.py --no-lineages --no-heldout --transfer --budget 8 \
    --kernel "$near" $flag --out "$OUT/a/near_$mode" > "$OUT/a/near_$mode.log" 2>&1
  echo "near $mode: rc $? at $(( $(date +%s) - start )) s"
done
tar -cf "$OUT/a.tar" -C "$OUT" a && rm -rf "$OUT/a"

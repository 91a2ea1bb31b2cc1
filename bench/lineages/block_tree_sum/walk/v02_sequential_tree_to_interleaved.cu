/* klc-spec
kernel: block_tree_sum
template: {BLOCK: 256}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
bytes: 4 * n + 4 * ceil_div(n, BLOCK)
flops: n
tolerance: {rtol: 0.00001, atol: 0.00001}
*/
// First stage of a sum: partial[b] = the sum of block b's BLOCK elements (the last block
// pads with zeros). The expert of the block_tree_sum lineage; one optimization, one code
// shape (README.md names the pass that removes it):
//   - the shared-memory tree's last six levels (strides 32 .. 1, which only warp 0 works
//     on) run by warp 0 alone with __syncwarp between levels, instead of a block-wide
//     __syncthreads per level that every warp waits at; one barrier after them makes s[0]
//     visible to the block.
// Every level adds the same elements in the same order as the plain tree loop, so the
// partials are bit for bit those of the loop.
// bytes: x read once, the partials written. flops: one add per element.
template <int BLOCK>
__global__ void block_tree_sum(const float* x, float* partial, int n) {
    __shared__ float s[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 1; k < BLOCK; k *= 2) {
        if (threadIdx.x % (2 * k) == 0) {
            s[threadIdx.x] += s[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
    }
}

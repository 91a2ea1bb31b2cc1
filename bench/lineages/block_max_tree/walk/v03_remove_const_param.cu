/* klc-spec
kernel: block_absmax
template: {BLOCK: 256}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 3)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
bytes: 4 * n + 4 * ceil_div(n, BLOCK)
flops: n
*/
// First stage of an absolute maximum (the scale statistic of FP8 training): partial[b] =
// max over block b's BLOCK elements of |x[i]| (0 past n). The expert of the block_max_tree
// lineage; one optimization, one code shape (README.md names the pass that removes it):
//   - the shared-memory fmaxf tree's last six levels (strides 32 .. 1, which only warp 0
//     works on) run by warp 0 alone with __syncwarp between levels, instead of a
//     block-wide __syncthreads per level; one barrier after them publishes s[0].
// The thread's index is read once into `tid`, as first versions often do. Maxima are exact:
// every version gives the same partials bit for bit.
// bytes: x read once, the partials written. flops: one comparison per element.
template <int BLOCK>
__global__ void block_absmax(float* x, float* partial, int n) {
    __shared__ float s[BLOCK];
    const unsigned int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    s[tid] = i < n ? fabsf(x[i]) : 0.0f;
    __syncthreads();
    for (int k = 1; k < BLOCK; k *= 2) {
        if (tid % (2 * k) == 0) {
            s[tid] = fmaxf(s[tid], s[tid + k]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}

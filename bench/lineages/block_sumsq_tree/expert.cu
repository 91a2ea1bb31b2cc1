/* klc-spec
kernel: block_sumsq
template: {BLOCK: 256}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
bytes: 4 * n + 4 * ceil_div(n, BLOCK)
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// First stage of a squared norm: partial[b] = the sum of x[i]^2 over block b's BLOCK
// elements (0 past n). The expert of the block_sumsq_tree lineage; two optimizations, two
// code shapes (README.md names the passes that remove them):
//   - sequential addressing: at stride k (halving from BLOCK / 2) the first k threads add
//     the slot k above theirs, so the working threads stay together and whole warps go idle,
//     where interleaved addressing (every 2 k-th thread, k doubling) keeps every warp
//     divergent at every level and computes a remainder per thread and level;
//   - the tree's last six levels (strides 32 .. 1, which only warp 0 works on) run by warp 0
//     alone with __syncwarp between levels; one barrier after them publishes s[0].
// bytes: x read once, the partials written. flops: a multiply and an add per element.
template <int BLOCK>
__global__ void block_sumsq(const float* x, float* partial, int n) {
    __shared__ float s[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK + tid;
    float v = i < n ? x[i] : 0.0f;
    s[tid] = v * v;
    __syncthreads();
    for (unsigned int k = BLOCK / 2; k > 32; k >>= 1) {
        if (tid < k) {
            s[tid] += s[tid + k];
        }
        __syncthreads();
    }
    if (tid < 32) {
        s[tid] += s[tid + 32];
        __syncwarp();
        if (tid < 16) {
            s[tid] += s[tid + 16];
        }
        __syncwarp();
        if (tid < 8) {
            s[tid] += s[tid + 8];
        }
        __syncwarp();
        if (tid < 4) {
            s[tid] += s[tid + 4];
        }
        __syncwarp();
        if (tid < 2) {
            s[tid] += s[tid + 2];
        }
        __syncwarp();
        if (tid < 1) {
            s[tid] += s[tid + 1];
        }
    }
    __syncthreads();
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}

/* klc-spec
kernel: block_max_shfl
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 3)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// A block maximum by shuffles spelled with max() (float values), warp 0 as tid < 32 and its
// lanes past the warp count padded with -INFINITY.
__global__ void block_max_shfl(const float* x, float* partial, int n) {
    __shared__ float smax[256];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    smax[tid] = (i < n) ? x[i] : -INFINITY;
    __syncthreads();
    for (int o = 256 / 2; o > 0; o >>= 1) {
        if (tid < o) {
            smax[tid] = fmaxf(smax[tid], smax[tid + o]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = smax[0];
    }
}

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
    float v = (i < n) ? x[i] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) {
        v = max(v, __shfl_down_sync(0xffffffff, v, o));
    }
    if (tid % 32 == 0) {
        smax[tid / 32] = v;
    }
    __syncthreads();
    if (tid < 32) {
        v = tid < 256 / 32 ? smax[tid] : -INFINITY;
        for (int o = 16; o > 0; o >>= 1) {
            v = max(v, __shfl_down_sync(0xffffffff, v, o));
        }
    }
    if (tid == 0) {
        partial[blockIdx.x] = v;
    }
}

/* klc-spec
kernel: small_partials
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 64)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 64)"]
block: [64]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused at ?k = 4: a partition of 64 on 16 threads is half a warp, which the full-mask
// shuffles and the warp count 64 / 4 / 32 = 0 cannot sum.
__global__ void small_partials(const float* in, float* out, int n) {
    __shared__ float red[64];
    int tid = threadIdx.x;
    int i = blockIdx.x * 64 + tid;
    float sum = (i < n) ? in[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, o);
    }
    if (tid % 32 == 0) {
        red[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < 64 / 32 ? red[tid] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, o);
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sum;
    }
}

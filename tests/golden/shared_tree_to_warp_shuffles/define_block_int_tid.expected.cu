/* klc-spec
kernel: block_partials
sizes: {n: 1048576}
verify_sizes:
  - {n: 4099}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 512)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A #define'd block of 512 threads, a signed thread index, the unbraced tree level.
#define BLOCK 512

__global__ void block_partials(const float* in, float* out, int n) {
    __shared__ float cache[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    float sum = i < n ? in[i] : 0.0f;
    for (int stride = 16; stride > 0; stride >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, stride);
    }
    if (tid % 32 == 0) {
        cache[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < BLOCK / 32 ? cache[tid] : 0.0f;
        for (int stride = 16; stride > 0; stride >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, stride);
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sum;
    }
}

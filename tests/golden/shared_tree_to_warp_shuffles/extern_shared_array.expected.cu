/* klc-spec
kernel: reduce_dynamic
sizes: {n: 1048576}
verify_sizes:
  - {n: 3001}
args:
  - {name: g_idata, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: g_odata, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
shared: 1024
*/
// The shared array sized at launch (extern, 256 floats of dynamic shared memory).
__global__ void reduce_dynamic(const float* g_idata, float* g_odata, unsigned int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = (i < n) ? g_idata[i] : 0.0f;
    for (unsigned int s = 16; s > 0; s >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, s);
    }
    if (tid % 32 == 0) {
        sdata[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < blockDim.x / 32 ? sdata[tid] : 0.0f;
        for (unsigned int s = 16; s > 0; s >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, s);
        }
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sum;
    }
}

/* klc-spec
kernel: sum_sq
sizes: {n: 1000003}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, 1024)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 1024)"]
block: [1024]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The thread index in an unsigned `tid`, a 1024-thread block, squares summed.
__global__ void sum_sq(const float* __restrict__ x, float* __restrict__ partial, int n) {
    __shared__ float sh[1024];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    float v = i < n ? x[i] : 0.0f;
    sh[tid] = v * v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sh[tid] += sh[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        sh[tid] += sh[tid + 32];
        __syncwarp();
        if (tid < 16) {
            sh[tid] += sh[tid + 16];
        }
        __syncwarp();
        if (tid < 8) {
            sh[tid] += sh[tid + 8];
        }
        __syncwarp();
        if (tid < 4) {
            sh[tid] += sh[tid + 4];
        }
        __syncwarp();
        if (tid < 2) {
            sh[tid] += sh[tid + 2];
        }
        __syncwarp();
        if (tid < 1) {
            sh[tid] += sh[tid + 1];
        }
    }
    __syncthreads();
    if (tid == 0) partial[blockIdx.x] = sh[0];
}

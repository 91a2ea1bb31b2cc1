/* klc-spec
kernel: reduce_blocks
sizes: {n: 1048576}
verify_sizes:
  - {n: 4099}
args:
  - {name: g_in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: g_out, shape: ["ceil_div(n, 512)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: ["ceil_div(512, 4)"]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A #define'd partition of 512, signed indices, the unbraced tree level and epilogue, the
// index with the thread's term first; the host launches it with the macro and a stream.
#define THREADS 512

__global__ void reduce_blocks(const float* g_in, float* g_out, int n) {
    __shared__ float cache[THREADS];
    int tid = threadIdx.x;
    int i = blockIdx.x * THREADS + threadIdx.x;
    float sum = 0.0f;
    for (int j = 0; j < 4; j++) {
        int idx = i + j * (THREADS / 4);
        if (idx < n) {
            sum += g_in[idx];
        }
    }
    cache[tid] = sum;
    __syncthreads();
    for (int stride = THREADS / 4 / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            cache[tid] += cache[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_out[blockIdx.x] = cache[0];
    }
}

void reduce_launch(const float* g_in, float* g_out, int n, cudaStream_t s) {
    int blocks = (n + THREADS - 1) / THREADS;
    reduce_blocks<<<blocks, THREADS / 4, 0, s>>>(g_in, g_out, n);
}

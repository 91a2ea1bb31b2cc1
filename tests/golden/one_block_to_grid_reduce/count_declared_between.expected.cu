/* klc-spec
kernel: mean_square
sizes: {rows: 2048, cols: 4096}
args:
  - {name: x, shape: [rows * cols], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [1], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(1) * 264"]
block: [512]
bytes: 4 * rows * cols + 4
flops: 2 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// A one-block mean square whose element count is a local declared between the partial sum
// and its loop (the statements the dots skip declare the loop's bound).
__global__ void mean_square(const float* __restrict__ x, float* __restrict__ out, int rows,
                            int cols) {
    static float partials[264];
    static unsigned int ticket;
    __shared__ float part[512];
    float s = 0.0f;
    const long long count = (long long)rows * cols;
    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x) {
        s += x[i] * x[i];
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            part[threadIdx.x] += part[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = part[0];
        __threadfence();
        if (atomicAdd(&ticket, 1u) == gridDim.x - 1) {
            __threadfence();
            float total = 0.0f;
            for (unsigned int b = 0; b < gridDim.x; ++b) {
                total += __ldcg(&partials[b]);
            }
            part[0] = total;
            ticket = 0;
            out[0] = part[0] / count;
        }
    }
}

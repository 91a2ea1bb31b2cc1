/* klc-spec
kernel: sum_all
template: {T: float}
sizes: {n: 1000000}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: result, shape: [1], role: out}
  - {name: n, value: n}
grid: ["(1) * 264"]
block: [256]
bytes: 4 * n + 8
flops: n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A templated total with a double accumulator and a tid copy; the loop index is an int
// (the spec's sizes keep it far from overflow).
template <typename T>
__global__ void sum_all(const T *x, double *result, int n)
{
    static double partials[264];
    static unsigned int ticket;
    __shared__ double sdata[256];
    unsigned int tid = threadIdx.x;
    double sum = 0.0;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        sum += (double)x[i];
    }
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = sdata[0];
        __threadfence();
        if (atomicAdd(&ticket, 1u) == gridDim.x - 1) {
            __threadfence();
            double total = 0.0;
            for (unsigned int b = 0; b < gridDim.x; ++b) {
                total += __ldcg(&partials[b]);
            }
            sdata[0] = total;
            ticket = 0;
            *result = sdata[0];
        }
    }
}

/* klc-spec
kernel: sum_all
template: {T: float}
sizes: {n: 1000000}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: result, shape: [1], role: out}
  - {name: n, value: n}
grid: [1]
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
    __shared__ double sdata[256];
    unsigned int tid = threadIdx.x;
    double sum = 0.0;
    for (int i = tid; i < n; i += blockDim.x)
        sum += (double)x[i];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        *result = sdata[0];
}

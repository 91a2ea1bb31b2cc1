/* klc-spec
kernel: dot_double
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: in, init: normal}
  - {name: result, shape: [1], type: "double*", role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A dot product in double: a double sum per thread, a shared tree, one double atomic add
// per block; the sum starts from 0.0 declared beside the shared array.
#define TPB 256
__global__ void dot_double(const float* x, const float* y, double* result, int n) {
    __shared__ double cache[TPB];
    double sum = 0.0;
    {
        int i = blockIdx.x * TPB + threadIdx.x;
        if (i < n) sum += (double)x[i] * y[i];
    }
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (int half = TPB / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) cache[threadIdx.x] += cache[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(result, cache[0]);
}

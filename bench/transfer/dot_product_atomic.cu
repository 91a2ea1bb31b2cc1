/* klc-spec
kernel: dot_product
sizes: {n: 33554432}
args:
  - {name: x, shape: [n], role: in, init: "normal(1, 1)"}
  - {name: y, shape: [n], role: in, init: "normal(1, 1)"}
  - {name: result, shape: [1], role: inout, init: "normal(0, 10)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n + 16
flops: 2 * n
tolerance: {rtol: 0.000001, atol: 0.000001}
*/
// family: full-reduction
// style: #define threads per block, shared cache with a halving loop, one double atomicAdd per block into a double result (the order of the block adds varies from run to run; in double the difference stays far below the tolerance)
// result[0] += sum of x[i] * y[i], with per-block float partial sums.
// bytes: x and y read (8n), the result read and written. flops: multiply and add.
#define THREADS_PER_BLOCK 256

__global__ void dot_product(const float* x, const float* y, double* result, int n) {
    __shared__ float cache[THREADS_PER_BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int cacheIndex = threadIdx.x;
    float temp = 0.0f;
    if (i < n) temp = x[i] * y[i];
    cache[cacheIndex] = temp;
    __syncthreads();

    int half = blockDim.x / 2;
    while (half != 0) {
        if (cacheIndex < half) cache[cacheIndex] += cache[cacheIndex + half];
        __syncthreads();
        half /= 2;
    }
    if (cacheIndex == 0) atomicAdd(result, (double)cache[0]);
}

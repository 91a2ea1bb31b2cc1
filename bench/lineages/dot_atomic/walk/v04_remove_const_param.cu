/* klc-spec
kernel: dot_atomic
sizes: {n: 33554432}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "normal(1, 1)"}
  - {name: y, shape: [n], role: in, init: "normal(1, 1)"}
  - {name: result, shape: [1], role: inout, init: "normal(0, 1)"}
  - {name: n, value: n}
grid: ["(ceil_div(n, 256 * 16)) * 16"]
block: [256]
bytes: 8 * n + 8
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.01}
*/
// result[0] += sum of x[i] * y[i]: a whole dot product into one accumulator. The expert of
// the dot_atomic lineage; one optimization, one code shape (README.md names the pass that
// removes it):
//   - many elements per thread: each thread adds the products blockDim.x * gridDim.x apart
//     into its own sum (a grid of n / (16 * 256) blocks), so each block's tree and atomic
//     add are paid once per 16 * 256 elements, not once per 256.
// The block's sums meet in a shared-memory halving tree (a while loop over `half`, as first
// versions write it); thread 0 adds the block's total with one atomicAdd.
// bytes: x and y read once, the result read and written. flops: a multiply and an add per
// element.
#define THREADS 256

__global__ void dot_atomic(float* x, float* y, float* result, int n) {
    __shared__ float cache[THREADS];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int cacheIndex = threadIdx.x;
    cache[cacheIndex] = i < n ? x[i] * y[i] : 0.0f;
    __syncthreads();
    int half = THREADS / 2;
    while (half != 0) {
        if (cacheIndex < half) {
            cache[cacheIndex] += cache[cacheIndex + half];
        }
        __syncthreads();
        half /= 2;
    }
    if (cacheIndex == 0) {
        atomicAdd(result, cache[0]);
    }
}

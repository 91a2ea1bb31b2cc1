/* klc-spec
kernel: block_dot
sizes: {n: 33554432}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "normal(1, 1)"}
  - {name: y, shape: [n], role: in, init: "normal(1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n + 4 * ceil_div(n, 256)
flops: 2 * n
tolerance: {rtol: 0.00001, atol: 0.00001}
*/
// First stage of a dot product: partial[b] = sum of x[i] * y[i] over block b's THREADS
// elements. The expert of the block_dot_tree lineage; one optimization, one code shape
// (README.md names the pass that removes it):
//   - the shared cache's halving loop, written as a while loop over `half` as first
//     versions often do, stops at 32; warp 0 runs the last six levels (each under
//     cacheIndex < half) with __syncwarp between them, and one __syncthreads after them
//     publishes cache[0].
// Every level adds the same elements in the same order as the plain loop: the partials are
// bit for bit those of the loop.
// bytes: x and y read once, the partials written. flops: a multiply and an add per element.
#define THREADS 256

__global__ void block_dot(const float* x, const float* y, float* partial, int n) {
    __shared__ float cache[THREADS];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int cacheIndex = threadIdx.x;
    float temp = 0.0f;
    if (i < n) temp = x[i] * y[i];
    cache[cacheIndex] = temp;
    __syncthreads();
    int half = THREADS / 2;
    while (half > 32) {
        if (cacheIndex < half) {
            cache[cacheIndex] += cache[cacheIndex + half];
        }
        __syncthreads();
        half /= 2;
    }
    if (cacheIndex < 32) {
        cache[cacheIndex] += cache[cacheIndex + 32];
        __syncwarp();
        if (cacheIndex < 16) {
            cache[cacheIndex] += cache[cacheIndex + 16];
        }
        __syncwarp();
        if (cacheIndex < 8) {
            cache[cacheIndex] += cache[cacheIndex + 8];
        }
        __syncwarp();
        if (cacheIndex < 4) {
            cache[cacheIndex] += cache[cacheIndex + 4];
        }
        __syncwarp();
        if (cacheIndex < 2) {
            cache[cacheIndex] += cache[cacheIndex + 2];
        }
        __syncwarp();
        if (cacheIndex < 1) {
            cache[cacheIndex] += cache[cacheIndex + 1];
        }
    }
    __syncthreads();
    if (cacheIndex == 0) partial[blockIdx.x] = cache[0];
}

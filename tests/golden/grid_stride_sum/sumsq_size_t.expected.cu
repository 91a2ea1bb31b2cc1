/* klc-spec
kernel: sum_squares
sizes: {n: 33554432}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: [1], role: inout, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 256), 16)"]
block: [256]
bytes: 8 * n
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.01}
*/
// A sum of squares: T *x spelling, a size_t index, a tid copy between the index and the
// accumulator, braces around the assignment, a macro for the block.
#define BS 256
__global__ void sum_squares(const float *x, float *out, size_t n) {
    __shared__ float sh[BS];
    unsigned int tid = threadIdx.x;
    float v = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        v += x[i] * x[i];
    }
    sh[tid] = v;
    __syncthreads();
    for (unsigned int s = BS / 2; s > 0; s >>= 1) {
        if (tid < s) sh[tid] += sh[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sh[0]);
}

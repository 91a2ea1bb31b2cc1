/* klc-spec
kernel: row_max
sizes: {rows: 4096, cols: 1000}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0, 1)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [128]
*/
// A row maximum per block: the thread index copied into `tid`, the tree's maximum in the
// if spelling, a row pointer, #define block size.
#include <math.h>
#define THREADS 128
__global__ void row_max(const float* x, float* out, int rows, int cols) {
    __shared__ float sm[THREADS];
    unsigned int tid = threadIdx.x;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = tid; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    sm[tid] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) {
            if (sm[tid + s] > sm[tid]) sm[tid] = sm[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sm[0];
}

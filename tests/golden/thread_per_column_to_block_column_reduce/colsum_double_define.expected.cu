/* klc-spec
kernel: col_abs_sum
sizes: {n: 32768, d: 1024}
verify_sizes:
  - {n: 301, d: 999}
  - {n: 3, d: 5}
args:
  - {name: in, shape: [n, d], role: in, init: normal}
  - {name: out, shape: [d], role: out}
  - {name: n, value: n}
  - {name: d, value: d}
grid: ["(ceil_div(d, 256)) * 8"]
block: ["ceil_div(256, 8)", 32]
bytes: 4 * n * d + 4 * d
flops: 2 * n * d
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Half the L1 norm of every column, accumulated in double, 64-bit offsets, the bound first.
#define NORM_SCALE 0.5
__global__ void col_abs_sum(const float *in, float *out, int n, int d) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    double acc = 0.0;
    __shared__ decltype(acc) part[1024];
    if (col < d) {
        for (int r = threadIdx.y; r < n; r += blockDim.y) {
            acc += fabs((double)in[(size_t)r * d + col]);
        }
    }
    part[threadIdx.y * blockDim.x + threadIdx.x] = acc;
    __syncthreads();
    if (col < d && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) {
            acc += part[k * blockDim.x + threadIdx.x];
        }
        out[col] = (float)(NORM_SCALE * acc);
    }
}

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
grid: ["ceil_div(d, 256)"]
block: [256]
bytes: 4 * n * d + 4 * d
flops: 2 * n * d
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Half the L1 norm of every column, accumulated in double, 64-bit offsets, the bound first.
#define NORM_SCALE 0.5
__global__ void col_abs_sum(const float *in, float *out, int n, int d) {
    int col = threadIdx.x + blockDim.x * blockIdx.x;
    if (d > col) {
        double acc = 0.0;
        for (int r = 0; r < n; ++r)
            acc += fabs((double)in[(size_t)r * d + col]);
        out[col] = (float)(NORM_SCALE * acc);
    }
}

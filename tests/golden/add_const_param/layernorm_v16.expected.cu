/* klc-spec
kernel: layernorm
template: {WARPS: 4, VPT: 8}
sizes: {rows: 65536, cols: 1024}
verify_sizes:
  - {rows: 64, cols: 1024}
  - {rows: 1001, cols: 1000}
  - {rows: 37, cols: 36}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 1)"}
  - {name: gamma, shape: [cols], role: in, init: "uniform(0.5, 1.5)"}
  - {name: beta, shape: [cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
  - {name: eps, value: 0.00001}
grid: ["(ceil_div(rows, WARPS)) * 4"]
block: ["ceil_div(WARPS * 32, 4)"]
bytes: 8 * rows * cols + 8 * cols
flops: 8 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * gamma + beta, for rows of cols floats
// (cols a multiple of 4, at most 128 * VPT). The expert of the layernorm lineage; each
// optimization is one separable code shape (README.md names the pass that removes it):
//   - __launch_bounds__(WARPS * 32);
//   - const __restrict__ inputs;
//   - one warp per row, WARPS rows per block: no shared memory, no __syncthreads;
//   - the row cached in registers (VPT float4 per lane; the loops over it have a constant
//     trip count, which the compiler unrolls fully, so the array stays in registers):
//     x is read once;
//   - one-pass statistics: sum and sum of squares in the same sweep and the same shuffle
//     loop (var = E[x^2] - mean^2, clamped at 0);
//   - 128-bit loads and stores (float4).
template <int WARPS, int VPT>
__global__ void 
layernorm(const float* x, const float* gamma,
          const float* beta, float* y, int rows, int cols, float eps) {
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float4 cache[VPT];
    float sum = 0.0f;
    float sumsq = 0.0f;
    for (int k = 0; k < VPT; ++k) {
        const int c = lane + 32 * k;
        if (c < cols / 4) {
            float4 v = make_float4(xr[4 * (c) + 0], xr[4 * (c) + 1], xr[4 * (c) + 2], xr[4 * (c) + 3]);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    const float mean = sum / cols;
    for (int k = 0; k < VPT; ++k) {
        const int c = lane + 32 * k;
        if (c < cols / 4) {
            float4 v = make_float4(xr[4 * (c) + 0], xr[4 * (c) + 1], xr[4 * (c) + 2], xr[4 * (c) + 3]);
            sumsq += ((v.x - mean) * (v.x - mean) + (v.y - mean) * (v.y - mean)) + ((v.z - mean) * (v.z - mean) + (v.w - mean) * (v.w - mean));
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sumsq += __shfl_xor_sync(0xffffffffu, sumsq, offset);
    }
    const float var = sumsq / cols;
    const float rstd = rsqrtf(var + eps);
    for (int k = 0; k < VPT; ++k) {
        const int c = lane + 32 * k;
        if (c < cols / 4) {
            float4 v = make_float4(xr[4 * (c) + 0], xr[4 * (c) + 1], xr[4 * (c) + 2], xr[4 * (c) + 3]);
            float4 g = make_float4(gamma[4 * (c) + 0], gamma[4 * (c) + 1], gamma[4 * (c) + 2], gamma[4 * (c) + 3]);
            float4 b = make_float4(beta[4 * (c) + 0], beta[4 * (c) + 1], beta[4 * (c) + 2], beta[4 * (c) + 3]);
            float4 o;
            o.x = (v.x - mean) * rstd * g.x + b.x;
            o.y = (v.y - mean) * rstd * g.y + b.y;
            o.z = (v.z - mean) * rstd * g.z + b.z;
            o.w = (v.w - mean) * rstd * g.w + b.w;
            {
                yr[4 * (c) + 0] = o.x;
                yr[4 * (c) + 1] = o.y;
                yr[4 * (c) + 2] = o.z;
                yr[4 * (c) + 3] = o.w;
            }
        }
    }
}

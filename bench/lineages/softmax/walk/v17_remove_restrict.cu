/* klc-spec
kernel: softmax
template: {WARPS: 4}
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 64, cols: 4096}
  - {rows: 1003, cols: 1000}
  - {rows: 37, cols: 36}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0, 2)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(ceil_div(rows, WARPS)) * 4"]
block: ["ceil_div(WARPS * 32, 4)"]
bytes: 8 * rows * cols
flops: 5 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.000001}
*/
// y[r, :] = softmax(x[r, :]) for each of rows rows of cols floats (cols a multiple of 4).
// The expert of the softmax lineage; each optimization is one separable code shape
// (README.md names the pass that removes it):
//   - __launch_bounds__(WARPS * 32);
//   - const __restrict__ input;
//   - one warp per row, WARPS rows per block: no shared memory, no __syncthreads;
//   - online softmax: the running maximum and the sum of exponentials rescaled to it are
//     kept together, so one sweep over the row gives both; lanes combine their (max, sum)
//     pairs with xor shuffles (every lane ends with the row's values);
//   - 128-bit loads and stores (float4);
//   - the __expf intrinsic.
// The initial maximum is -FLT_MAX, not -inf: a lane with no elements then combines as
// (max, 0) and exp(-FLT_MAX - m) underflows to 0 instead of making inf - inf = NaN.
template <int WARPS>
__global__ void 
softmax(const float* x, float* y, int rows, int cols) {
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float m = -3.402823466e+38f;
    float s = 0.0f;
    for (int c = lane; c < cols / 4; c += 32) {
        float4 v = make_float4(xr[4 * (c) + 0], xr[4 * (c) + 1], xr[4 * (c) + 2], xr[4 * (c) + 3]);
        m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    }
    for (int c = lane; c < cols / 4; c += 32) {
        float4 v = make_float4(xr[4 * (c) + 0], xr[4 * (c) + 1], xr[4 * (c) + 2], xr[4 * (c) + 3]);
        const float nm = m;
        s += ((expf(v.x - nm) + expf(v.y - nm)) + (expf(v.z - nm) + expf(v.w - nm)));
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, offset);
    }
    const float inv = 1.0f / s;
    for (int c = lane; c < cols / 4; c += 32) {
        float4 v = make_float4(xr[4 * (c) + 0], xr[4 * (c) + 1], xr[4 * (c) + 2], xr[4 * (c) + 3]);
        float4 o;
        o.x = expf(v.x - m) * inv;
        o.y = expf(v.y - m) * inv;
        o.z = expf(v.z - m) * inv;
        o.w = expf(v.w - m) * inv;
        {
            yr[4 * (c) + 0] = o.x;
            yr[4 * (c) + 1] = o.y;
            yr[4 * (c) + 2] = o.z;
            yr[4 * (c) + 3] = o.w;
        }
    }
}

/* klc-spec
kernel: nchw_to_nhwc_hw
sizes: {N: 8, C: 256, H: 56, W: 56}
verify_sizes:
  - {N: 2, C: 8, H: 16, W: 16}
  - {N: 1, C: 3, H: 17, W: 13}
  - {N: 1, C: 1, H: 1, W: 3}
args:
  - {name: src, shape: [N, C, H, W], role: in, init: normal}
  - {name: dst, shape: [N, H, W, C], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(H * W, 256)", C, N]
block: [256]
bytes: 8 * N * C * H * W
flops: 0
*/
// NCHW -> NHWC with H and W apart: the plane size declared between the indices and an
// early-return bounds check, 64-bit offsets, T *x spacing.
__global__ void nchw_to_nhwc_hw(const float *src, float *dst, int N, int C, int H, int W) {
    int hw = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    int n = blockIdx.z;
    const int plane = H * W;
    if (hw >= plane) return;
    long long in_off = ((long long)n * C + c) * plane + hw;
    long long out_off = ((long long)n * plane + hw) * C + c;
    dst[out_off] = src[in_off];
}

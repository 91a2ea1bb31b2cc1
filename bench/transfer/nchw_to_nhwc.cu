/* klc-spec
kernel: nchw_to_nhwc
sizes: {N: 32, C: 64, H: 128, W: 128}
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
// family: transpose
// style: 3D grid (x over pixels, y over channels, z over images), size_t offsets, T *x spacing
// Layout change NCHW -> NHWC: dst[n, h, w, c] = src[n, c, h, w].
// bytes: src read, dst written. flops: none.
__global__ void nchw_to_nhwc(const float *src, float *dst, int N, int C, int H, int W) {
    int hw = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    int n = blockIdx.z;
    if (hw < H * W) {
        size_t plane = (size_t)H * W;
        size_t in_off = ((size_t)n * C + c) * plane + hw;
        size_t out_off = ((size_t)n * plane + hw) * C + c;
        dst[out_off] = src[in_off];
    }
}

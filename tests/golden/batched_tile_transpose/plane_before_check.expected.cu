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
block: ["ceil_div(256, 16)", 16]
bytes: 8 * N * C * H * W
flops: 0
*/
// NCHW -> NHWC with H and W apart: the plane size declared between the indices and an
// early-return bounds check, 64-bit offsets, T *x spacing.
__global__ void nchw_to_nhwc_hw(const float *src, float *dst, int N, int C, int H, int W) {
    __shared__ float tile[16][16];
    int row0 = blockIdx.y / 16 * 16;
    int group_blocks = min(16, (int)gridDim.y - row0);
    for (int sub = blockIdx.y - row0; sub < 16; sub += group_blocks) {
        {
            int hw = (blockIdx.x * 16 + sub) * 16 + threadIdx.x;
            int c = row0 + threadIdx.y;
            int n = blockIdx.z;
            const int plane = H * W;
            if (hw < plane && c < gridDim.y) {
                long long in_off = ((long long)n * C + c) * plane + hw;
                long long out_off = ((long long)n * plane + hw) * C + c;
                tile[threadIdx.y][threadIdx.x] = src[in_off];
            }
        }
        __syncthreads();
        {
            int hw = (blockIdx.x * 16 + sub) * 16 + threadIdx.y;
            int c = row0 + threadIdx.x;
            int n = blockIdx.z;
            const int plane = H * W;
            if (hw < plane && c < gridDim.y) {
                long long in_off = ((long long)n * C + c) * plane + hw;
                long long out_off = ((long long)n * plane + hw) * C + c;
                dst[out_off] = tile[threadIdx.x][threadIdx.y];
            }
        }
        __syncthreads();
    }
}

/* klc-spec
kernel: nchw_to_nhwc_lane
sizes: {N: 8, C: 64, HW: 4096}
verify_sizes:
  - {N: 2, C: 3, HW: 300}
args:
  - {name: src, shape: [N, C, HW], role: in, init: normal}
  - {name: dst, shape: [N, HW, C], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: HW, value: HW}
grid: ["ceil_div(HW, 256)", C, N]
block: [256]
bytes: 8 * N * C * HW
flops: 0
*/
// Near miss: a declaration before the bounds check reads the thread index (its lane). In
// the 16 x 16 block threadIdx.x means another thing, so the skill refuses.
__global__ void nchw_to_nhwc_lane(const float* src, float* dst, int N, int C, int HW) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    int n = blockIdx.z;
    int lane = threadIdx.x % 32;
    if (p < HW) {
        dst[((size_t)n * HW + p) * C + c + lane - lane] = src[((size_t)n * C + c) * HW + p];
    }
}

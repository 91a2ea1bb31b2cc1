/* klc-spec
kernel: nchw_to_cnhw
sizes: {N: 16, C: 64, HW: 4096}
verify_sizes:
  - {N: 2, C: 3, HW: 300}
args:
  - {name: in, shape: [N, C, HW], role: in, init: normal}
  - {name: out, shape: [C, N, HW], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: HW, value: HW}
grid: ["ceil_div(HW, 256)", C, N]
block: [256]
bytes: 8 * N * C * HW
flops: 0
*/
// Near miss: NCHW -> CNHW swaps the batch and the channel but keeps the pixels innermost:
// the store is already contiguous along the pixel, there is no transpose to stage.
__global__ void nchw_to_cnhw(const float* in, float* out, int N, int C, int HW) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    int n = blockIdx.z;
    if (p < HW) {
        out[((size_t)c * N + n) * HW + p] = in[((size_t)n * C + c) * HW + p];
    }
}

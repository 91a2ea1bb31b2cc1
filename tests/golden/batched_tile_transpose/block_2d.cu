/* klc-spec
kernel: nchw_to_nhwc_2d
sizes: {N: 16, C: 64, HW: 4096}
verify_sizes:
  - {N: 2, C: 3, HW: 300}
args:
  - {name: in, shape: [N, C, HW], role: in, init: normal}
  - {name: out, shape: [N, HW, C], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: HW, value: HW}
grid: ["ceil_div(HW, 64)", C, N]
block: [64, 4]
bytes: 8 * N * C * HW
flops: 0
*/
// Near miss: a 64 x 4 block already (each row of threads copies the same elements again):
// the skill needs the 1-D block of 256 threads that it reshapes into 16 x 16.
__global__ void nchw_to_nhwc_2d(const float* in, float* out, int N, int C, int HW) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    int n = blockIdx.z;
    if (p < HW) {
        out[((size_t)n * HW + p) * C + c] = in[((size_t)n * C + c) * HW + p];
    }
}

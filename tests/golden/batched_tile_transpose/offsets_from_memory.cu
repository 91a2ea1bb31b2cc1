/* klc-spec
kernel: nchw_to_nhwc_strided
sizes: {N: 16, C: 64, HW: 4096}
verify_sizes:
  - {N: 2, C: 3, HW: 300}
args:
  - {name: in, shape: [N, C, HW], role: in, init: normal}
  - {name: out, shape: [N, HW, C], role: out}
  - {name: strides, shape: [4], role: in, init: ones}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: HW, value: HW}
grid: ["ceil_div(HW, 256)", C, N]
block: [256]
bytes: 8 * N * C * HW
flops: 0
*/
// Near miss: the batch stride is read from memory in the bounds check. The skill copies the
// offsets' declarations into both phases of the tile and proves them functions of the
// indices and the parameters only; a load it cannot judge, so it refuses.
__global__ void nchw_to_nhwc_strided(const float* in, float* out, const int* strides, int N,
                                     int C, int HW) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    int n = blockIdx.z;
    if (p < HW) {
        int batch_stride = strides[0];
        out[n * batch_stride + p * C + c] = in[n * batch_stride + c * HW + p];
    }
}

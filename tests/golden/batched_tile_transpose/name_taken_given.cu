/* klc-spec
kernel: nchw_to_nhwc_tile_named
sizes: {N: 16, C: 96, HW: 3136}
verify_sizes:
  - {N: 2, C: 8, HW: 256}
  - {N: 1, C: 3, HW: 221}
  - {N: 3, C: 37, HW: 5}
args:
  - {name: in, shape: [N, C, HW], role: in, init: normal}
  - {name: out, shape: [N, HW, C], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: HW, value: HW}
grid: ["ceil_div(HW, 256)", C, N]
block: [256]
bytes: 8 * N * C * HW
flops: 0
*/
// Near miss: the pixel index is named tile, the name the skill gives its shared tile (a
// declaration of its own would shadow it), so it refuses.
__global__ void nchw_to_nhwc_tile_named(const float* in, float* out, int N, int C, int HW) {
    int tile = threadIdx.x + blockDim.x * blockIdx.x;
    int ch = blockIdx.y;
    int img = blockIdx.z;
    if (tile >= HW) return;
    out[(img * HW + tile) * C + ch] = in[(img * C + ch) * HW + tile];
}

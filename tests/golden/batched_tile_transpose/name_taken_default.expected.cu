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
block: ["ceil_div(256, 16)", 16]
bytes: 8 * N * C * HW
flops: 0
*/
// Near miss: the pixel index is named tile, the name the skill gives its shared tile (a
// declaration of its own would shadow it), so it refuses.
__global__ void nchw_to_nhwc_tile_named(const float* in, float* out, int N, int C, int HW) {
    __shared__ float tile_1[16][16];
    int row0 = blockIdx.y / 16 * 16;
    int group_blocks = min(16, (int)gridDim.y - row0);
    for (int sub = blockIdx.y - row0; sub < 16; sub += group_blocks) {
        {
            int tile = (blockIdx.x * 16 + sub) * 16 + threadIdx.x;
            int ch = row0 + threadIdx.y;
            int img = blockIdx.z;
            if (tile < HW && ch < gridDim.y) {
                tile_1[threadIdx.y][threadIdx.x] = in[(img * C + ch) * HW + tile];
            }
        }
        __syncthreads();
        {
            int tile = (blockIdx.x * 16 + sub) * 16 + threadIdx.y;
            int ch = row0 + threadIdx.x;
            int img = blockIdx.z;
            if (tile < HW && ch < gridDim.y) {
                out[(img * HW + tile) * C + ch] = tile_1[threadIdx.x][threadIdx.y];
            }
        }
        __syncthreads();
    }
}

/* klc-spec
kernel: btc_to_bct
sizes: {B: 8, T: 1024, C: 768}
verify_sizes:
  - {B: 2, T: 64, C: 256}
  - {B: 1, T: 17, C: 300}
  - {B: 3, T: 5, C: 7}
args:
  - {name: x, shape: [B, T, C], role: in, init: normal}
  - {name: y, shape: [B, C, T], role: out}
  - {name: B, value: B}
  - {name: T, value: T}
  - {name: C, value: C}
grid: ["ceil_div(C, 256)", T, B]
block: ["ceil_div(256, 16)", 16]
bytes: 8 * B * T * C
flops: 0
*/
// [B][T][C] -> [B][C][T] (the activations of a sequence model, channels made the inner
// dimension's neighbours): the time step from blockIdx.y, the batch from blockIdx.z, one
// thread per channel, 64-bit offsets declared in the bounds check, T *x spacing.
__global__ void btc_to_bct(const float *x, float *y, int B, int T, int C) {
    __shared__ float tile[16][16];
    int row0 = blockIdx.y / 16 * 16;
    int group_blocks = min(16, (int)gridDim.y - row0);
    for (int sub = blockIdx.y - row0; sub < 16; sub += group_blocks) {
        {
            int ch = (blockIdx.x * 16 + sub) * 16 + threadIdx.x;
            int t = row0 + threadIdx.y;
            int b = blockIdx.z;
            if (ch < C && t < gridDim.y) {
                size_t src_off = ((size_t)b * T + t) * C + ch;
                size_t dst_off = ((size_t)b * C + ch) * T + t;
                tile[threadIdx.y][threadIdx.x] = x[src_off];
            }
        }
        __syncthreads();
        {
            int ch = (blockIdx.x * 16 + sub) * 16 + threadIdx.y;
            int t = row0 + threadIdx.x;
            int b = blockIdx.z;
            if (ch < C && t < gridDim.y) {
                size_t src_off = ((size_t)b * T + t) * C + ch;
                size_t dst_off = ((size_t)b * C + ch) * T + t;
                y[dst_off] = tile[threadIdx.x][threadIdx.y];
            }
        }
        __syncthreads();
    }
}

/* klc-spec
kernel: conv_rows16
sizes: {N: 2048}
verify_sizes:
  - {N: 40}
args:
  - {name: m, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: k, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 256)", "ceil_div(N, 16)"]
block: [256]
*/
// The row index steps by a literal 16, launched on a 1-D block of 256 threads (refused: 16 is
// not the block's y extent, so the thread index does not number the rows once each).
__global__ void conv_rows16(const float* m, float* out, const float* k, int N) {
    int row = blockIdx.y * 16 + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - 3;
    int start_c = col - 3;
    float t = 0.0f;
    for (int i = 0; i < 7; i++) {
        for (int j = 0; j < 7; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    t += m[(start_r + i) * N + (start_c + j)] * k[i * 7 + j];
                }
            }
        }
    }
    if (row < N && col < N) out[row * N + col] = t;
}

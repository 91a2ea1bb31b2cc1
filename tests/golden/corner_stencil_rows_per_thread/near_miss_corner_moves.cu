/* klc-spec
kernel: conv_shifted
sizes: {N: 2048}
verify_sizes:
  - {N: 40}
args:
  - {name: m, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: k, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]
block: [16, 16]
*/
// The corner moves after its declaration (clamped to the top row): the rows its loop walks
// are not a window of the output's row (refused: no window rows for adjacent outputs to share).
__global__ void conv_shifted(const float* m, float* out, const float* k, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - 3;
    int start_c = col - 3;
    if (start_r < 0) start_r = 0;
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

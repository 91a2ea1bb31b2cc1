/* klc-spec
kernel: conv_shifted
sizes: {N: 512}
args:
  - {name: m, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: k, shape: [9], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]
block: [16, 16]
*/
// The corner moves after it is declared (a window clamped to the top row): the tile is
// loaded for the corner row - D / 2, which the window no longer starts at. Refused.
#define D 3
__global__ void conv_shifted(const float* m, float* out, const float* k, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - D / 2;
    int start_c = col - D / 2;
    if (start_r < 0) start_r = 0;
    float t = 0.0f;
    for (int i = 0; i < D; i++) {
        for (int j = 0; j < D; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    t += m[(start_r + i) * N + (start_c + j)] * k[i * D + j];
                }
            }
        }
    }
    if (row < N && col < N) out[row * N + col] = t;
}

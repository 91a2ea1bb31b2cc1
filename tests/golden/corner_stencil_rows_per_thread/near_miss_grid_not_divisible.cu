/* klc-spec
kernel: conv_floor
sizes: {N: 2048}
verify_sizes:
  - {N: 40}
args:
  - {name: m, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: k, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["N // 16", "N // 16"]
block: [16, 16]
*/
// A grid of whole blocks (N / 16, rounded down): at 40 rows its 2 block rows compute rows
// 0 .. 31 and leave the last 8 alone, and 4 does not divide 2 (refused: a grid 4 times shorter,
// rounded up, would compute rows 32 .. 39 too).
__global__ void conv_floor(const float* m, float* out, const float* k, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
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

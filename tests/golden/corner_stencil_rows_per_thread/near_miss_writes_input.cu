/* klc-spec
kernel: conv_scratch
sizes: {N: 2048}
verify_sizes:
  - {N: 40}
args:
  - {name: m, shape: [N, N], role: inout, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: k, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]
block: [16, 16]
*/
// The statements of a row write the input (a scratch cell) before the window reads it (refused:
// a row that stores anything but its output).
__global__ void conv_scratch(float* m, float* out, const float* k, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - 3;
    int start_c = col - 3;
    if (row == 0 && col == 0) m[0] = 0.0f;
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

/* klc-spec
kernel: conv_any
sizes: {N: 2048}
verify_sizes:
  - {N: 40}
args:
  - {name: m, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: k, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
  - {name: width, value: 7}
grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]
block: [16, 16]
*/
// The mask width an argument: the window rows loop runs a count the compiler cannot unroll
// (refused: the corner is row - width / 2, not a constant distance).
__global__ void conv_any(const float* m, float* out, const float* k, int N, int width) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - width / 2;
    int start_c = col - width / 2;
    float t = 0.0f;
    for (int i = 0; i < width; i++) {
        for (int j = 0; j < width; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    t += m[(start_r + i) * N + (start_c + j)] * k[i * width + j];
                }
            }
        }
    }
    if (row < N && col < N) out[row * N + col] = t;
}

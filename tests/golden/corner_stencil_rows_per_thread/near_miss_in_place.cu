/* klc-spec
kernel: conv_in_place
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
// An in-place filter: the output is the matrix the windows read (refused: a row of one thread
// would read the outputs an earlier row of it stored).
__global__ void conv_in_place(float* m, float* out, const float* k, int N) {
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
    if (row < N && col < N) m[row * N + col] = t;
}

/* klc-spec
kernel: conv_in_place
sizes: {N: 512}
args:
  - {name: m, shape: [N, N], role: inout, init: "uniform(-1, 1)"}
  - {name: k, shape: [9], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]
block: [16, 16]
*/
// The result written over the input: a tile loaded before the barrier would hold values
// that other blocks have already replaced. Refused.
#define D 3
__global__ void conv_in_place(float* m, const float* k, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - D / 2;
    int start_c = col - D / 2;
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
    if (row < N && col < N) m[row * N + col] = t;
}

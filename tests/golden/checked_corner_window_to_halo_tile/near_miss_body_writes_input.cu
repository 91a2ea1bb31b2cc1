/* klc-spec
kernel: conv_clear_first
sizes: {N: 512}
args:
  - {name: m, shape: [N, N], role: inout, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: k, shape: [9], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]
block: [16, 16]
*/
// The statements before the window write the input (its first row cleared): the tile would
// hold what each element was when the block loaded it. Refused.
#define D 3
__global__ void conv_clear_first(float* m, float* out, const float* k, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - D / 2;
    int start_c = col - D / 2;
    float t = 0.0f;
    if (row == 0 && col < N) m[col] = 0.0f;
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

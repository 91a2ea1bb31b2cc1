/* klc-spec
kernel: conv5x5_chain
sizes: {N: 4096}
verify_sizes:
  - {N: 64}
  - {N: 37}
  - {N: 4}
args:
  - {name: in, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: w, shape: [25], role: in, init: "uniform(-1, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 32)", "ceil_div(N, 8)"]
block: [32, 8]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A 5 x 5 convolution whose window is walked from its corner and checked in one && chain
// without parentheses, the rows' and columns' bounds interleaved (the nested ifs of course
// material in another spelling).
#define KW 5

__global__ void conv5x5_chain(const float* in, float* out, const float* w, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int r0 = row - KW / 2;
    int c0 = col - KW / 2;
    float s = 0.0f;
    if (r0 >= 0 && r0 + KW <= N && c0 >= 0 && c0 + KW <= N) {
        for (int i = 0; i < KW; i++) {
            for (int j = 0; j < KW; j++) {
                s += in[(r0 + i) * N + (c0 + j)] * w[i * KW + j];
            }
        }
    } else {
        for (int i = 0; i < KW; i++) {
            for (int j = 0; j < KW; j++) {
                if ((r0 + i) >= 0 && (r0 + i) < N) {
                    if ((c0 + j) >= 0 && (c0 + j) < N) {
                        s += in[(r0 + i) * N + (c0 + j)] * w[i * KW + j];
                    }
                }
            }
        }
    }
    if (row < N && col < N) out[row * N + col] = s;
}

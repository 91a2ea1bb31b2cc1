/* klc-spec
kernel: conv2d_3x3
sizes: {N: 4096}
verify_sizes:
  - {N: 64}
  - {N: 37}
  - {N: 2}
args:
  - {name: img, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [N, N], role: out}
  - {name: w, shape: [9], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 32)", "ceil_div(N, 8)"]
block: [32, 8]
*/
// A 3 x 3 convolution with the corner written from MASK_WIDTH / 2 (no offset macro) and a host
// launch in the same file whose dim3 grid covers the matrix: the launch is rewritten with the
// kernel.
#define MASK_WIDTH 3

__global__ void conv2d_3x3(float *img, float *out, float *w, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - MASK_WIDTH / 2;
    int start_c = col - MASK_WIDTH / 2;
    float sum = 0.0f;
    for (int i = 0; i < MASK_WIDTH; i++) {
        for (int j = 0; j < MASK_WIDTH; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    sum += img[(start_r + i) * N + (start_c + j)] * w[i * MASK_WIDTH + j];
                }
            }
        }
    }
    if (row < N && col < N) {
        out[row * N + col] = sum;
    }
}

void launch_conv2d_3x3(float *img, float *out, float *w, int N) {
    dim3 block(32, 8);
    dim3 grid((N + 31) / 32, (N + 7) / 8);
    conv2d_3x3<<<grid, block>>>(img, out, w, N);
}

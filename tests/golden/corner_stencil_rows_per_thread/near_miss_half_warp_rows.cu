/* klc-spec
kernel: convolution_2d
sizes: {N: 8192}
verify_sizes:
  - {N: 64}
  - {N: 37}
  - {N: 5}
args:
  - {name: matrix, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: result, shape: [N, N], role: out}
  - {name: mask, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]
block: [16, 16]
bytes: 8 * N * N
flops: 98 * N * N
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A 2-D convolution of an N x N matrix with a 7 x 7 mask passed by pointer, in the spelling
// of course material: the window's top-left corner as start_r / start_c, each of its rows
// and columns checked against the matrix in nested ifs, zeros outside.
#define MASK_DIM 7
#define MASK_OFFSET (MASK_DIM / 2)

__global__ void convolution_2d(float *matrix, float *result, float *mask, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - MASK_OFFSET;
    int start_c = col - MASK_OFFSET;
    float temp = 0.0f;
    for (int i = 0; i < MASK_DIM; i++) {
        for (int j = 0; j < MASK_DIM; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    temp += matrix[(start_r + i) * N + (start_c + j)] * mask[i * MASK_DIM + j];
                }
            }
        }
    }
    if (row < N && col < N) {
        result[row * N + col] = temp;
    }
}

/* klc-spec
kernel: convolution_2d
sizes: {N: 8192}
verify_sizes:
  - {N: 64}
  - {N: 37}
  - {N: 7}
  - {N: 5}
  - {N: 1}
args:
  - {name: matrix, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: result, shape: [N, N], role: out}
  - {name: mask, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 32)", "ceil_div(N, 8)"]
block: [32, 8]
bytes: 8 * N * N
flops: 98 * N * N
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A 7 x 7 convolution of an N x N matrix (zero outside it), the expert of the
// window_interior_corner lineage, written in the spelling of course material: the window's
// top-left corner as start_r / start_c, the window walked by i, j from 0 to MASK_DIM, each
// row and column of it checked against the matrix in nested ifs. One optimization on top
// (README.md names the pass that removes it):
//   - the interior fast path: an output whose whole window lies inside the matrix
//     (start_r >= 0 and start_r + MASK_DIM <= N, the same along columns) walks it with no
//     check, so that the compiler unrolls both loops into 49 straight loads and multiply-adds;
//     the border keeps the checked loops. In the interior every check holds, so both branches
//     add the same products in the same order.
// bytes: matrix read once (neighbours from L1/L2), result written once. flops: 49 multiply-adds.
#define MASK_DIM 7
#define MASK_OFFSET (MASK_DIM / 2)

__global__ void convolution_2d(const float *matrix, float *result, const float *mask, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - MASK_OFFSET;
    int start_c = col - MASK_OFFSET;
    float temp = 0.0f;
    if (start_r >= 0 && start_r + MASK_DIM <= N && start_c >= 0 && start_c + MASK_DIM <= N) {
        for (int i = 0; i < MASK_DIM; i++) {
            for (int j = 0; j < MASK_DIM; j++) {
                temp += matrix[(start_r + i) * N + (start_c + j)] * mask[i * MASK_DIM + j];
            }
        }
    } else {
        for (int i = 0; i < MASK_DIM; i++) {
            for (int j = 0; j < MASK_DIM; j++) {
                if ((start_r + i) >= 0 && (start_r + i) < N) {
                    if ((start_c + j) >= 0 && (start_c + j) < N) {
                        temp += matrix[(start_r + i) * N + (start_c + j)] * mask[i * MASK_DIM + j];
                    }
                }
            }
        }
    }
    if (row < N && col < N) {
        result[row * N + col] = temp;
    }
}

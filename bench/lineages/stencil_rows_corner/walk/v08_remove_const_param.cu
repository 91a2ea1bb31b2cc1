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
grid: ["ceil_div(N, 32)", "(ceil_div(N, 8 * 4)) * 4"]
block: [32, 8]
bytes: 8 * N * N
flops: 98 * N * N
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A 7 x 7 convolution of an N x N matrix (zero outside it) with a mask passed by pointer, the
// expert of the stencil_rows_corner lineage, written in the spelling of course material: the
// window's top-left corner as start_r / start_c, the window walked by i, j from 0 to
// MASK_DIM, each row and column of it checked against the matrix in nested ifs. On a 32 x 8
// block (a square one would let the walk swap the thread roles first), with these
// optimizations on top (README.md names the passes that remove them):
//   - rows per thread: every thread computes 4 vertically adjacent output rows of its
//     column, row = y0 + rr with y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4, and
//     stops at the first row past the matrix, on a grid 4 times shorter (a literal 4, so
//     that the walk's naive end is the first version as written), with no shared tile: the window of row y reads the rows
//     y - 3 .. y + 3, the next row's all but one of them again;
//   - the interior fast path of a thread's rows: a thread whose rows all have their whole
//     window inside the matrix (y0 - MASK_OFFSET >= 0, y0 - MASK_OFFSET + 4 + MASK_DIM -
//     1 <= N, the same along its column) walks every window with no check: the rows loop
//     unrolled (#pragma unroll) and the windows' constant trip counts unrolled by the
//     compiler, the source and the mask __restrict__, NVRTC loads the 4 + 6 matrix rows of
//     the 4 windows once (70 loads of the matrix and 49 of the mask for 4 outputs, where
//     one output per thread loads 49 of each). The other threads keep the checked windows;
//   - __restrict__ and const pointers: the stores of one row do not make the compiler load
//     the shared window rows and the mask again for the next.
// bytes: matrix read once (neighbours from registers, L1 or L2), result written once. flops:
// 49 multiply-adds per output.
#define MASK_DIM 7
#define MASK_OFFSET (MASK_DIM / 2)

__global__ void convolution_2d(float * matrix, float * result, const float * mask, int N) {
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

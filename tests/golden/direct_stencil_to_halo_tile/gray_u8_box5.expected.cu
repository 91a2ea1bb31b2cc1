/* klc-spec
kernel: box5_u8
sizes: {rows: 4096, cols: 8192}
args:
  - {name: in, shape: [rows, cols], role: in, init: "randint(0, 256)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 8)"]
block: [32, 8]
*/
// A 5 x 5 box filter of an 8-bit grey image: the sum in an int, the mean rounded to the
// nearest integer, a 32 x 8 block, __restrict__ pointers.
__global__ void box5_u8(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                        int rows, int cols) {
    __shared__ unsigned char tile[8 + 2 * 2][32 + 2 * 2];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 8 + 2 * 2; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 32 + 2 * 2; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - 2;
            int gx = blockIdx.x * blockDim.x + tx - 2;
            if (gy >= 0 && gy < rows && gx >= 0 && gx < cols) {
                tile[ty][tx] = in[gy * cols + gx];
            }
        }
    }
    __syncthreads();
    if (x >= cols || y >= rows) return;
    int sum = 0;
    int count = 0;
    for (int i = max(y - 2, 0); i <= min(y + 2, rows - 1); i++) {
        for (int j = max(x - 2, 0); j <= min(x + 2, cols - 1); j++) {
            sum += tile[i - blockIdx.y * blockDim.y + 2][j - blockIdx.x * blockDim.x + 2];
            ++count;
        }
    }
    out[y * cols + x] = (unsigned char)((sum + count / 2) / count);
}

/* klc-spec
kernel: gauss3x3_u8
sizes: {rows: 4096, cols: 4096}
verify_sizes:
  - {rows: 37, cols: 101}
  - {rows: 2, cols: 1}
args:
  - {name: src, shape: [rows, cols], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [rows, cols], type: "unsigned char*", role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(ceil_div(rows, 8), 4)"]
block: [32, 8]
bytes: 2 * rows * cols
flops: 18 * rows * cols
*/
// A 3 x 3 Gaussian of an 8-bit image in the offsets spelling: the window walked by dy, dx
// from -1 to 1, each neighbour checked against the image and its weight added to the sum
// of weights met; the block's y extent a literal in the index, the check column first.

__constant__ float weights[3][3] = {{1.f, 2.f, 1.f}, {2.f, 4.f, 2.f}, {1.f, 2.f, 1.f}};

__global__ void gauss3x3_u8(const unsigned char* src, unsigned char* dst, int rows, int cols) {
    int x = blockIdx.x * 32 + threadIdx.x;
    int y0 = (blockIdx.y * 8 + threadIdx.y) * 4;
    if (x >= cols) return;
    for (int rr = 0; rr < 4; rr++) {
        int y = y0 + rr;
        if (y >= rows) return;
        float sum = 0.0f, norm = 0.0f;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                int yy = y + dy;
                int xx = x + dx;
                if (yy >= 0 && yy < rows && xx >= 0 && xx < cols) {
                    float w = weights[dy + 1][dx + 1];
                    sum += w * src[yy * cols + xx];
                    norm += w;
                }
            }
        }
        dst[y * cols + x] = (unsigned char)(sum / norm + 0.5f);
    }
}

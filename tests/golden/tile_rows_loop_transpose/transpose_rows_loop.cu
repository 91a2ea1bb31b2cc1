/* klc-spec
kernel: transpose_rows_loop
template: {TILE: 32, ROWS: 8}
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 131, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, TILE)", "ceil_div(rows, TILE)"]
block: [TILE, ROWS]
bytes: 8 * rows * cols
flops: 0
*/
// out = in^T on a 32 x 8 block, no shared memory: each thread copies TILE / ROWS elements
// of its column, ROWS rows apart.
template <int TILE, int ROWS>
__global__ void transpose_rows_loop(float* out, const float* in, int rows, int cols) {
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        if (x < cols && y + j < rows) {
            out[x * rows + (y + j)] = in[(y + j) * cols + x];
        }
    }
}

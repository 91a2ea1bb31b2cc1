/* klc-spec
kernel: clip_rows
sizes: {rows: 64, len: 131072}
verify_sizes:
  - {rows: 5, len: 3001}
args:
  - {name: w, shape: [rows, len], role: inout}
  - {name: limit, shape: [rows], role: in, init: "uniform(0, 1)"}
  - {name: rows, value: rows}
  - {name: len, value: len}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * len
*/
// Each row's values clipped to the row's limit in place, a thread per row walking the
// whole row; the element's offset is kept in a 64-bit local, and the kernel already has a
// `tile` of its own.
__global__ void clip_rows(float* w, const float* limit, int rows, int len) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float tile = limit[row];
        for (int j = 0; j < len; j++) {
            const long long at = (long long)row * len + j;
            const float v = w[at];
            if (v > tile) {
                w[at] = tile;
            }
        }
    }
}

void clip_rows_launch(float* w, const float* limit, int rows, int len) {
    dim3 grid((rows + 127) / 128);
    dim3 block(128);
    clip_rows<<<grid, block>>>(w, limit, rows, len);
}

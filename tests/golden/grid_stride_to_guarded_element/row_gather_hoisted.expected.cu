/* klc-spec
kernel: scaled_row_gather
sizes: {rows: 4096, width: 1024, table_rows: 512}
verify_sizes:
  - {rows: 33, width: 100, table_rows: 17}
args:
  - {name: out, shape: [rows, width], role: out}
  - {name: picks, shape: [rows], role: in, init: "randint(0, table_rows)"}
  - {name: table, shape: [table_rows, width], role: in}
  - {name: rows, value: rows}
  - {name: width, value: width}
  - {name: scale, value: 0.5}
grid: ["(ceil_div(width, 256 * 4)) * 4", "min(rows, 256)"]
block: [256]
bytes: 8 * rows * width
*/
// Rows of a table picked by index and scaled: the rows a grid apart along y, the columns a
// grid apart along x, with the column walk's start and stride hoisted into 64-bit locals.
__global__ void scaled_row_gather(float* out, const int* picks, const float* table,
                                  const long long rows, const long long width, float scale) {
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
        const float* src = table + static_cast<long long>(picks[r]) * width;
        float* dst = out + r * width;
        {
            long long j = first;
            if (j < width) {
                dst[j] = scale * src[j];
            }
        }
    }
}

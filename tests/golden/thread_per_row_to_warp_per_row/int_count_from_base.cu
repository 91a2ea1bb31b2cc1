/* klc-spec
kernel: count_from_base
sizes: {rows: 4096, cols: 2048}
verify_sizes:
  - {rows: 37, cols: 99}
  - {rows: 3, cols: 1}
args:
  - {name: flags, shape: [rows, cols], role: in, init: "randint(0, 2)"}
  - {name: base, shape: [rows], role: in, init: "randint(0, 100)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols + 8 * rows
flops: rows * cols
timeout_s: 60
*/
// An int count of set flags per row starting from a base count: integers sum exactly in any
// order, so the lanes' partial counts, reduced and added once to the base, are the count.
__global__ void count_from_base(const int* flags, const int* base, int* out, int rows,
                                int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const int* fr = flags + (size_t)r * cols;
        int count = base[r];
        for (int c = 0; c < cols; c++) {
            count += fr[c];
        }
        out[r] = count;
    }
}

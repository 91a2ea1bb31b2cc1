/* klc-spec
kernel: masked_decay
sizes: {rows: 128, len: 65536}
verify_sizes:
  - {rows: 3, len: 1000}
args:
  - {name: w, shape: [rows, len], role: inout}
  - {name: mask, shape: [rows, len], role: in, init: "randint(0, 2)"}
  - {name: decay, shape: [rows], role: in, init: "uniform(0.5, 1)"}
  - {name: rows, value: rows}
  - {name: len, value: len}
  - {name: chunk, value: 1024}
grid: ["ceil_div(rows, 128)", "ceil_div(ceil_div(len, 1024), 64)"]
block: [128]
bytes: 12 * rows * len
*/
// A thread per row, each row's elements split into chunks, one chunk per block along y:
// the masked elements of the row decay by the row's factor.
__global__ void masked_decay(float* w, const int* mask, const float* decay, int rows, int len,
                             int chunk) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const int first = 0;
        const int last = len;
        const float d = decay[row];
        for (int j = first; j < last; j++) {
            const long long at = (long long)row * len + j;
            if (mask[at]) {
                w[at] = d * w[at];
            }
        }
    }
}

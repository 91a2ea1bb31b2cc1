/* klc-spec
kernel: cross_entropy
sizes: {rows: 8192, classes: 8192}
verify_sizes:
  - {rows: 256, classes: 1024}
  - {rows: 1001, classes: 999}
  - {rows: 37, classes: 5}
args:
  - {name: logits, shape: [rows, classes], role: in, init: "normal(0, 3)"}
  - {name: labels, shape: [rows], role: in, init: "randint(0, classes)"}
  - {name: loss, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: classes, value: classes}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * classes + 4 * rows + 4 * rows
flops: 3 * rows * classes
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// Per-row cross-entropy loss from logits (row-major rows x classes) and integer labels:
//   loss[r] = log(sum over c of exp(logits[r, c] - m)) + m - logits[r, labels[r]],
// where m is the row's maximum (subtracted so that exp cannot overflow). One thread per row:
// a pass for the maximum, a pass for the sum of exponentials, then one element read for the
// label. Labels must lie in [0, classes).
// bytes: logits read once (4 * rows * classes), labels read (4 * rows), loss written
// (4 * rows). flops: per logit, a comparison for the maximum, a subtraction and an add (3);
// expf is not counted.
__global__ void cross_entropy(const float* logits, const int* labels, float* loss, int rows,
                              int classes) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* row = logits + r * classes;
        float m = row[0];
        for (int c = 1; c < classes; c++) {
            m = fmaxf(m, row[c]);
        }
        float sum = 0.0f;
        for (int c = 0; c < classes; c++) {
            sum += expf(row[c] - m);
        }
        loss[r] = logf(sum) + m - row[labels[r]];
    }
}

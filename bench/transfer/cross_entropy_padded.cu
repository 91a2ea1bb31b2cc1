/* klc-spec
kernel: cross_entropy_forward
sizes: {BT: 8192, V: 8000, Vp: 8192}
verify_sizes:
  - {BT: 128, V: 1000, Vp: 1024}
  - {BT: 77, V: 999, Vp: 999}
  - {BT: 3, V: 5, Vp: 8}
args:
  - {name: losses, shape: [BT], role: out}
  - {name: logits, shape: [BT, Vp], role: in, init: "normal(0, 4)"}
  - {name: targets, shape: [BT], role: in, init: "randint(0, V)"}
  - {name: BT, value: BT}
  - {name: V, value: V}
  - {name: Vp, value: Vp}
grid: ["ceil_div(BT, 64)"]
block: [64]
bytes: 4 * BT * V + 4 * BT + 4 * BT
flops: 3 * BT * V
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 120
*/
// family: row-reduction
// style: thread per row, padded row stride (Vp) with V valid columns, -INFINITY, if-style max, long row offset, int targets
// Cross-entropy loss from logits: losses[i] = logsumexp(logits[i, :V]) - logits[i, target].
// Rows are Vp floats apart; only the first V are classes (the padding is never read).
// bytes: the V valid logits of each row (4 BT V), targets (4 BT), losses (4 BT).
// flops: compare, subtract, add per logit (expf, logf not counted).
__global__ void cross_entropy_forward(float* losses, const float* logits, const int* targets,
                                      int BT, int V, int Vp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < BT) {
        const float* row = logits + (long)i * Vp;
        float maxval = -INFINITY;
        for (int v = 0; v < V; v++) {
            if (row[v] > maxval) maxval = row[v];
        }
        float sum = 0.0f;
        for (int v = 0; v < V; v++) {
            sum += expf(row[v] - maxval);
        }
        int t = targets[i];
        losses[i] = logf(sum) + maxval - row[t];
    }
}

/* klc-spec
kernel: causal_softmax_inplace
sizes: {BH: 64, T: 1024}
verify_sizes:
  - {BH: 2, T: 128}
  - {BH: 3, T: 37}
  - {BH: 1, T: 3}
args:
  - {name: scores, shape: [BH, T, T], role: inout, init: "normal(0, 2)"}
  - {name: BH, value: BH}
  - {name: T, value: T}
grid: ["ceil_div(BH * T, 128)"]
block: [128]
bytes: 8 * BH * T * T
flops: 3 * BH * T * T
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// Causal softmax of precomputed attention scores, in place: row t keeps keys 0..t
// (`<=` bounds), the masked keys are zeroed in a loop over the whole row; one thread per query
// row, leaving early past the last one.
__global__ void causal_softmax_inplace(float *scores, int BH, int T) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= BH * T) return;
    int t = idx % T;
    float *row = scores + (size_t)idx * T;
    float m = -INFINITY;
    for (int j = 0; j <= t; j++) {
        m = fmaxf(m, row[j]);
    }
    float s = 0.0f;
    for (int j = 0; j <= t; j++) {
        row[j] = expf(row[j] - m);
        s += row[j];
    }
    for (int j = 0; j <= t; j++) {
        row[j] /= s;
    }
    for (int j = 0; j < T; j++) {
        if (j > t) row[j] = 0.0f;
    }
}

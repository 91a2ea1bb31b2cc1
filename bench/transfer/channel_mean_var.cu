/* klc-spec
kernel: channel_mean_var
sizes: {N: 65536, C: 512}
verify_sizes:
  - {N: 1024, C: 256}
  - {N: 301, C: 99}
  - {N: 2, C: 3}
args:
  - {name: x, shape: [N, C], role: in, init: "normal(3, 2)"}
  - {name: mean, shape: [C], role: out}
  - {name: var, shape: [C], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(C, 64)"]
block: [64]
bytes: 4 * N * C + 8 * C
flops: 3 * N * C
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// family: column-reduction
// style: thread per channel, double accumulators (sum and sum of squares in one pass), long offsets, two outputs
// Batch-norm statistics of an (N, C) activation, channels last: for each channel c,
//   mean[c] = sum_n x[n, c] / N,  var[c] = sum_n x[n, c]^2 / N - mean[c]^2 (biased),
// accumulated in double so the one-pass formula keeps its precision.
// bytes: x read once, mean and var written. flops: 3 per element.
__global__ void channel_mean_var(const float* x, float* mean, float* var, int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        double s = 0.0, ss = 0.0;
        for (long n = 0; n < N; n++) {
            double v = x[n * C + c];
            s += v;
            ss += v * v;
        }
        double m = s / N;
        mean[c] = (float)m;
        var[c] = (float)(ss / N - m * m);
    }
}

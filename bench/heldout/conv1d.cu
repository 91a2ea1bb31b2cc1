/* klc-spec
kernel: conv1d
sizes: {n: 67108864, k: 7}
verify_sizes:
  - {n: 1048576, k: 7}
  - {n: 1000003, k: 7}
  - {n: 777, k: 7}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: w, shape: [k], role: in, init: "uniform(-1, 1)"}
  - {name: y, shape: ["n - k + 1"], role: out}
  - {name: n, value: n}
  - {name: k, value: k}
grid: ["ceil_div(n - k + 1, 256)"]
block: [256]
bytes: 4 * n + 4 * k + 4 * (n - k + 1)
flops: 2 * k * (n - k + 1)
*/
// A "valid" 1D convolution (cross-correlation, as deep-learning frameworks define it) of x
// (n floats) with a filter w of k taps (k = 7 here) given as an input buffer:
//   y[i] = sum over j in 0..k-1 of w[j] * x[i + j],   for i in 0 .. n - k.
// One output per thread; the tap count is a runtime argument.
// bytes: x read once (4n), w read once (4k), y written once (4 * (n - k + 1)).
// flops: a multiply and an add per tap and output (2k per output).
__global__ void conv1d(const float* x, const float* w, float* y, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - k + 1) {
        float sum = 0.0f;
        for (int j = 0; j < k; j++) {
            sum += w[j] * x[i + j];
        }
        y[i] = sum;
    }
}

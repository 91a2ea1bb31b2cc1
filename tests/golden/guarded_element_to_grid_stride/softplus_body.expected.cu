/* klc-spec
kernel: softplus
sizes: {n: 16777216}
verify_sizes:
  - {n: 1000003}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 256), 16)"]
block: [256]
bytes: 8 * n
*/
// The plainest spelling: the whole kernel body is the thread's one guarded element, and
// the host launches a thread per element.
__global__ void softplus(float* y, const float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = log1pf(expf(x[i]));
    }
}

void softplus_launch(float* y, const float* x, int n) {
    softplus<<<(n + 4095) / 4096, 256>>>(y, x, n);
}

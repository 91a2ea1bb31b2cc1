/* klc-spec
kernel: last_value
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Each thread keeps the last value its element block computed: several elements per thread
// would keep only the last one.
__global__ void last_value(const float *x, float *out, int n) {
    float t = 0.0f;
    {
        int i = blockIdx.x * 256 + threadIdx.x;
        if (i < n) t = x[i] * 2.0f;
    }
    out[blockIdx.x * 256 + threadIdx.x] = t;
}

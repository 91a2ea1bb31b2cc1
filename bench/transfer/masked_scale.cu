/* klc-spec
kernel: dropout_apply
sizes: {n: 67108864}
args:
  - {name: out, shape: [n], role: out}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: mask, shape: [n], role: in, init: "randint(0, 2)"}
  - {name: keep_scale, value: 1.1111111}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n + n + 4 * n
flops: n
*/
// family: elementwise
// style: byte mask, ternary select, scalar argument between buffers and size
// Dropout with a precomputed keep mask: out = mask ? x * keep_scale : 0, keep_scale = 1/(1-p).
// bytes: x read (4n), mask read (n), out written (4n). flops: one multiply per element.
__global__ void dropout_apply(float* out, const float* x, const unsigned char* mask,
                              float keep_scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = mask[i] ? x[i] * keep_scale : 0.0f;
    }
}

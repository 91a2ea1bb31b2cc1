/* klc-spec
kernel: vector_add
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: a, shape: [n], role: in, init: normal}
  - {name: b, shape: [n], role: in, init: "uniform(-2, 2)"}
  - {name: c, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 12 * n
flops: n
*/
// c = a + b over n floats, one element per thread.
// bytes: a and b read once (8n), c written once (4n). flops: one add per element.
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

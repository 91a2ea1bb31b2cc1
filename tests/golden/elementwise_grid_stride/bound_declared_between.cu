/* klc-spec
kernel: pair_rotate
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: theta, value: 0.3}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// The bound is declared between the index and an early return (half the elements: one
// pair per thread), a row pointer in the body: one pair's rotation per element of the loop.
__global__ void pair_rotate(float *y, const float *x, float theta, int n) {
    int p = threadIdx.x + blockIdx.x * blockDim.x;
    const int pairs = n / 2;
    const float c = cosf(theta), s = sinf(theta);
    if (p >= pairs) return;
    const float *xp = x + 2 * p;
    float a = xp[0], b = xp[1];
    y[2 * p] = a * c - b * s;
    y[2 * p + 1] = a * s + b * c;
}

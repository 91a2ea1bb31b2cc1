/* klc-spec
kernel: leaky_relu_backward
sizes: {n: 33554432}
args:
  - {name: n, value: n}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: dy, shape: [n], role: in, init: normal}
  - {name: dx, shape: [n], role: out}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 12 * n
flops: n
*/
// family: elementwise
// style: macros (a grid-stride loop macro, a slope constant), size first, no const on inputs
// Gradient of leaky ReLU: dx = dy where x > 0, else LEAKY_SLOPE * dy.
// bytes: x and dy read, dx written (12n). flops: one multiply per element.
#define LEAKY_SLOPE 0.01f
#define KERNEL_LOOP(i, n) \
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

__global__ void leaky_relu_backward(const int n, float* x, float* dy, float* dx) {
    KERNEL_LOOP(index, n) {
        dx[index] = dy[index] * (x[index] > 0 ? 1.0f : LEAKY_SLOPE);
    }
}

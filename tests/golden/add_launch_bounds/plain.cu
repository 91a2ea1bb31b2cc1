/* klc-spec
kernel: scale
sizes: {n: 1048576}
args:
  - {name: y, type: "float*", shape: [n], role: inout, init: normal}
  - {name: a, type: float, value: 1.5}
  - {name: n, type: int, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: n
*/
#define THREADS 256
__global__ void __launch_bounds__(THREADS) already(float* y) { y[threadIdx.x] = 0.0f; }

__global__ void scale(float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}

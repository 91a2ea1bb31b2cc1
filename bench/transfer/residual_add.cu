/* klc-spec
kernel: residual_forward
sizes: {n: 33554432}
args:
  - {name: out, shape: [n], role: out}
  - {name: inp1, shape: [n], role: in, init: normal}
  - {name: inp2, shape: [n], role: in, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
bytes: 12 * n
flops: n
*/
// family: elementwise
// style: size_t size and index, unbraced if, host main() with a launch
// Residual connection: out = inp1 + inp2.
// bytes: two inputs read, one output written (12n). flops: one add per element.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void residual_forward(float* out, const float* inp1, const float* inp2, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = inp1[i] + inp2[i];
}

void residual_forward_launch(float* out, const float* inp1, const float* inp2, size_t n) {
    const int block = 512;
    const unsigned int grid = (unsigned int)((n + block - 1) / block);
    residual_forward<<<grid, block>>>(out, inp1, inp2, n);
}

int main(int argc, char** argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (1u << 24);
    float *a, *b, *c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    cudaMemset(a, 0, n * sizeof(float));
    cudaMemset(b, 0, n * sizeof(float));
    residual_forward_launch(c, a, b, n);
    cudaError_t err = cudaDeviceSynchronize();
    printf("residual_forward on %zu elements: %s\n", n, cudaGetErrorString(err));
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}

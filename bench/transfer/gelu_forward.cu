/* klc-spec
kernel: gelu_forward
sizes: {N: 33554432}
args:
  - {name: out, shape: [N], role: out}
  - {name: inp, shape: [N], role: in, init: "normal(0, 2)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 256)"]
block: [256]
bytes: 8 * N
flops: 8 * N
*/
// family: elementwise
// style: #define constant, M_PI, T* spacing, output first, if-guard, host main() with a launch
// GELU, tanh approximation: out = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
// bytes: inp read once, out written once (8N). flops: the polynomial and the blend (8 per
// element); tanhf is not counted.
#include <cstdio>
#include <cuda_runtime.h>

#define GELU_SCALE sqrtf(2.0f / M_PI)

__global__ void gelu_forward(float* out, const float* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float x = inp[i];
        float cube = 0.044715f * x * x * x;
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + cube)));
    }
}

int main() {
    const int N = 1 << 20;
    float* h = (float*)malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) h[i] = (i % 200 - 100) / 25.0f;
    float *d_in, *d_out;
    cudaMalloc(&d_in, N * sizeof(float));
    cudaMalloc(&d_out, N * sizeof(float));
    cudaMemcpy(d_in, h, N * sizeof(float), cudaMemcpyHostToDevice);
    int block_size = 256;
    int grid_size = (N + block_size - 1) / block_size;
    gelu_forward<<<grid_size, block_size>>>(d_out, d_in, N);
    cudaMemcpy(h, d_out, N * sizeof(float), cudaMemcpyDeviceToHost);
    printf("gelu(%f) = %f\n", -4.0f + 7 / 25.0f, h[7]);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h);
    return 0;
}

// A training step's element-wise and per-row kernels, written the way training code is: each
// kernel has a host launcher that picks its block size and grid, and main() sets the model's
// sizes (batch B, sequence T, channels C), allocates the buffers and calls the launchers.
// Written for klc's tests of `klc spec init` (no spec block: that is what it drafts).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <math.h>

#define CEIL_DIV(M, N) (((M) + (N) - 1) / (N))
#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)

__global__ void residual_forward_kernel(float* out, const float* inp1, const float* inp2,
                                        int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        out[idx] = inp1[idx] + inp2[idx];
    }
}

__global__ void gelu_forward_kernel(float* out, const float* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float x = inp[i];
        float cube = 0.044715f * x * x * x;
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALING_FACTOR * (x + cube)));
    }
}

__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd,
                                         const float* inp, const float* weight,
                                         const float* bias, int N, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N) {
        return;
    }
    const float* x = inp + idx * C;
    float m = 0.0f;
    for (int i = 0; i < C; i++) {
        m += x[i];
    }
    m = m / C;
    float v = 0.0f;
    for (int i = 0; i < C; i++) {
        float d = x[i] - m;
        v += d * d;
    }
    float s = rsqrtf(v / C + 1e-5f);
    float* o = out + idx * C;
    for (int i = 0; i < C; i++) {
        o[i] = (x[i] - m) * s * weight[i] + bias[i];
    }
    mean[idx] = m;
    rstd[idx] = s;
}

__global__ void softmax_scale_kernel(float* att, float scale, int BH, int T) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < BH * T) {
        float* a = att + row * T;
        float maxval = -INFINITY;
        for (int j = 0; j < T; j++) {
            maxval = fmaxf(maxval, a[j] * scale);
        }
        float sum = 0.0f;
        for (int j = 0; j < T; j++) {
            float e = expf(a[j] * scale - maxval);
            a[j] = e;
            sum += e;
        }
        for (int j = 0; j < T; j++) {
            a[j] = a[j] / sum;
        }
    }
}

void residual_forward(float* out, const float* inp1, const float* inp2, int N) {
    const int block_size = 256;
    const int grid_size = CEIL_DIV(N, block_size);
    residual_forward_kernel<<<grid_size, block_size>>>(out, inp1, inp2, N);
}

void gelu_forward(float* out, const float* inp, int N) {
    const int block_size = 128;
    const int grid_size = CEIL_DIV(N, block_size);
    gelu_forward_kernel<<<grid_size, block_size>>>(out, inp, N);
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                       const float* weight, const float* bias, int B, int T, int C) {
    const int block_size = 128;
    const int N = B * T;
    const int grid_size = CEIL_DIV(N, block_size);
    layernorm_forward_kernel<<<grid_size, block_size>>>(out, mean, rstd, inp, weight, bias, N,
                                                        C);
}

void softmax_forward(float* att, int B, int NH, int T, int HS) {
    const int block_size = 64;
    float scale = 1.0f / sqrtf((float)HS);
    softmax_scale_kernel<<<CEIL_DIV(B * NH * T, block_size), block_size>>>(att, scale, B * NH,
                                                                          T);
}

float* device_random(size_t n) {
    float* host = (float*)malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        host[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
    }
    float* dev;
    cudaMalloc(&dev, n * sizeof(float));
    cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
    free(host);
    return dev;
}

int main() {
    int B = 8;
    int T = 1024;
    int C = 768;
    int NH = 12;
    float* x = device_random(B * T * C);
    float* y = device_random(B * T * C);
    float* w = device_random(C);
    float* b = device_random(C);
    float* att = device_random(B * NH * T * T);
    float *out, *mean, *rstd;
    cudaMalloc(&out, B * T * C * sizeof(float));
    cudaMalloc(&mean, B * T * sizeof(float));
    cudaMalloc(&rstd, B * T * sizeof(float));
    residual_forward(out, x, y, B * T * C);
    gelu_forward(out, x, B * T * C);
    layernorm_forward(out, mean, rstd, x, w, b, B, T, C);
    softmax_forward(att, B, NH, T, C / NH);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}

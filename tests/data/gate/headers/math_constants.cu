// What <math.h> gives device code under nvcc: M_PI, INFINITY, NAN, HUGE_VALF; host code too.
#include <math.h>
#include <stdio.h>
#include <cuda_runtime.h>

__device__ float gelu_tanh(float x) {
    const float k = sqrtf(2.0f / (float)M_PI);
    return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_rows(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float best = -INFINITY;
    if (isnan(v)) v = NAN;
    if (v > HUGE_VALF / 2) v = HUGE_VALF;
    best = fmaxf(best, gelu_tanh(v) + (float)(M_E - M_E) + (float)M_SQRT2 * 0.0f);
    y[i] = best;
}

int main() {
    printf("pi = %f\n", M_PI);
    return 0;
}

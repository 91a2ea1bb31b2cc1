// Kernels exported with C linkage for NVRTC / cuModuleGetFunction lookups.
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" {

__global__ void vec_scale(float *__restrict__ x, const float s, const unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)blockDim.x * gridDim.x)
        x[i] *= s;
}

__global__ void __launch_bounds__(1024) transpose_naive(float *odata, const float *idata, int width, int height)
{
    unsigned int xIndex = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int yIndex = blockDim.y * blockIdx.y + threadIdx.y;
    if (xIndex < width && yIndex < height)
    {
        unsigned int index_in  = xIndex + width * yIndex;
        unsigned int index_out = yIndex + height * xIndex;
        odata[index_out] = idata[index_in];
    }
}

__device__ float clampf(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }

__global__ void clamp_kernel(float *x, float lo, float hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = clampf(x[i], lo, hi);
}

}  // extern "C"

extern "C" __global__ void __launch_bounds__(256, 2)
uint8_to_float(const uint8_t *__restrict__ src, float *__restrict__ dst, float scale, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i] * scale;
}

#ifdef __cplusplus
extern "C"
#endif
__global__ void maybe_c_linkage(int *flag) { *flag = 1; }

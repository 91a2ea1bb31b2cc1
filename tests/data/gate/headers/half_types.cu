// fp16 and bf16 element-wise: the conversions and arithmetic of cuda_fp16.h and cuda_bf16.h.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void scale_mixed(const __half* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                            __nv_bfloat16* __restrict__ out, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half h = __hmul(a[i], __float2half(alpha));
    float s = __half2float(h) + __bfloat162float(b[i]);
    out[i] = __float2bfloat16(s);
}

__global__ void add_half2(const __half2* __restrict__ x, __half2* __restrict__ y, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) y[i] = __hadd2(x[i], y[i]);
}

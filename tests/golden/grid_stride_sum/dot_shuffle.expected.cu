/* klc-spec
kernel: dot_warp
sizes: {n: 33554432}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: in, init: normal}
  - {name: out, shape: [1], role: inout, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 256), 16)"]
block: [256]
bytes: 8 * n
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.1}
*/
// A dot product whose block sum is two rounds of warp shuffles through a shared array of warp
// sums; every warp leader adds nothing itself: thread 0 adds the block total. atol 0.1: a
// float sum of 2^25 products, reassociated, moves by about 0.02 (measured on an H200).
__global__ void dot_warp(const float* __restrict__ x, const float* __restrict__ y, float* out, int n) {
    __shared__ float warp_sums[8];
    float p = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        p += x[i] * y[i];
    }
    for (int o = 16; o > 0; o >>= 1) p += __shfl_down_sync(0xffffffff, p, o);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = p;
    __syncthreads();
    if (threadIdx.x < 32) {
        p = threadIdx.x < 8 ? warp_sums[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) p += __shfl_down_sync(0xffffffff, p, o);
        if (threadIdx.x == 0) atomicAdd(out, p);
    }
}

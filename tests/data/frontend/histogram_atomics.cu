#include <cuda_runtime.h>
#include <cstdint>

#define NUM_BINS 256
#define HIST_THREADS 192

__global__ void histogram_global_atomics(const uint8_t *__restrict__ data, unsigned int *__restrict__ bins, size_t n)
{
    size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t stride = (size_t)blockDim.x * gridDim.x;
    while (tid < n) {
        atomicAdd(&bins[data[tid]], 1u);
        tid += stride;
    }
}

__global__ void __launch_bounds__(HIST_THREADS)
histogram_shared_atomics(const uint8_t *__restrict__ data, unsigned int *__restrict__ bins, size_t n)
{
    __shared__ unsigned int local[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

__global__ void atomic_zoo(int *i32, unsigned long long *u64, float *f32, double *f64, int *flag)
{
    atomicSub(i32, 1);
    atomicExch(i32 + 1, threadIdx.x);
    atomicMin(i32 + 2, (int)threadIdx.x);
    atomicMax(i32 + 3, (int)threadIdx.x);
    atomicInc((unsigned int *)(i32 + 4), 1024u);
    atomicDec((unsigned int *)(i32 + 5), 1024u);
    atomicAnd(i32 + 6, 0xff);
    atomicOr(i32 + 7, 1 << (threadIdx.x & 31));
    atomicXor(i32 + 8, 0x5a);
    atomicAdd(u64, 1ull);
    atomicAdd(f32, 0.5f);
    atomicAdd(f64, 0.25);
    atomicAdd_block(f32 + 1, 1.0f);
    atomicAdd_system(f32 + 2, 1.0f);
    int old = atomicCAS(flag, 0, 1);
    if (old == 0) {
        __threadfence();
        atomicExch(flag, 0);
    }
}

__device__ float atomicMaxFloat(float *addr, float value)
{
    int *addr_as_int = (int *)addr;
    int old = *addr_as_int, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value) break;
        old = atomicCAS(addr_as_int, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void max_reduce(const float *x, float *result, int n)
{
    float m = -3.402823466e+38f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        m = fmaxf(m, x[i]);
    unsigned mask = __activemask();
    for (int off = 16; off > 0; off /= 2)
        m = fmaxf(m, __shfl_down_sync(mask, m, off));
    if ((threadIdx.x & 31) == 0) atomicMaxFloat(result, m);
}

__global__ void warp_aggregated_inc(int *counter, int *out, const int *pred, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (pred[i]) {
        unsigned active = __activemask();
        unsigned ballot = __ballot_sync(active, 1);
        int leader = __ffs(ballot) - 1;
        int lane = threadIdx.x & 31;
        int base;
        if (lane == leader) base = atomicAdd(counter, __popc(ballot));
        base = __shfl_sync(active, base, leader);
        int rank = __popc(ballot & ((1u << lane) - 1));
        out[base + rank] = i;
    }
}

// Inline PTX in the styles seen in production kernels.
#include <cstdint>
#include <cuda_fp16.h>

__device__ __forceinline__ uint32_t smem_u32addr(const void *smem_ptr) {
  uint32_t addr;
  asm ("{.reg .u64 u64addr;\n"
       " cvta.to.shared.u64 u64addr, %1;\n"
       " cvt.u32.u64 %0, u64addr;}\n"
       : "=r"(addr)
       : "l"(smem_ptr)
  );
  return addr;
}

__device__ __forceinline__ void cp_async_cg_16(uint32_t smem_addr, const void *gmem_ptr, bool pred) {
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %2, 0;\n"
      "  @p cp.async.cg.shared.global [%0], [%1], 16;\n"
      "}\n" ::"r"(smem_addr),
      "l"(gmem_ptr), "r"((int)pred));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ float4 ld_global_nc_v4(const float4 *ptr) {
  float4 ret;
  asm volatile ("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];"
                : "=f"(ret.x), "=f"(ret.y), "=f"(ret.z), "=f"(ret.w)
                : "l"(ptr));
  return ret;
}

__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__global__ void __launch_bounds__(128, 4)
pipelined_copy(const float4 *__restrict__ in, float4 *__restrict__ out, int n_vec) {
  __shared__ float4 buf[2][128];
  int base = blockIdx.x * 128 * 4;
  uint32_t s0 = smem_u32addr(&buf[0][threadIdx.x]);
  uint32_t s1 = smem_u32addr(&buf[1][threadIdx.x]);
  cp_async_cg_16(s0, in + base + threadIdx.x, base + threadIdx.x < n_vec);
  cp_async_commit();
  #pragma unroll 1
  for (int step = 1; step < 4; ++step) {
    uint32_t dst = (step & 1) ? s1 : s0;
    int g = base + step * 128 + threadIdx.x;
    cp_async_cg_16(dst, in + g, g < n_vec);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    int prev = base + (step - 1) * 128 + threadIdx.x;
    if (prev < n_vec) out[prev] = buf[(step - 1) & 1][threadIdx.x];
    __syncthreads();
  }
  cp_async_wait<0>();
  __syncthreads();
  int last = base + 3 * 128 + threadIdx.x;
  if (last < n_vec) out[last] = buf[1][threadIdx.x];
}

__global__ void mma_demo(const uint32_t *__restrict__ A, const uint32_t *__restrict__ B, float *__restrict__ D) {
  uint32_t a[4], b[2];
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  int lane = threadIdx.x & 31;
  #pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = A[lane * 4 + i];
  b[0] = B[lane * 2];
  b[1] = B[lane * 2 + 1];
  mma_m16n8k16_f16(d, a, b);
  #pragma unroll
  for (int i = 0; i < 4; ++i) D[lane * 4 + i] = d[i];
}

__global__ void clock_and_globaltimer(long long *out) {
  long long t0 = clock64();
  uint64_t gt;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));
  unsigned smid;
  asm("mov.u32 %0, %%smid;" : "=r"(smid));
  __nanosleep(100);
  out[blockIdx.x * 3 + 0] = t0;
  out[blockIdx.x * 3 + 1] = (long long)gt;
  out[blockIdx.x * 3 + 2] = smid;
}

__global__ void nc_load_sum(const float4 *in, float *out, int n) {
  float acc = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float4 v = ld_global_nc_v4(in + i);
    acc += v.x + v.y + v.z + v.w;
  }
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(out), "f"(acc) : "memory");
}

/* klc/cuda/cuda_stub.h: what CUDA code needs in order to *parse* under libclang, with no CUDA
 * toolkit installed. klc force-includes it (-include) and makes <cuda_runtime.h>, <cuda.h>,
 * <cuda_fp16.h>, <cooperative_groups.h>, ... resolve to empty files, so one header is the
 * single source of declarations whatever a kernel includes.
 *
 * Declarations only matter for types, qualifiers, sizes and constants: no body here is meant
 * to run. Sizes and alignments follow the CUDA headers (float4: 16 bytes, aligned to 16), so
 * that sizeof/alignof facts are the ones nvcc would compute. Helper macros are named
 * __KLC_* and undefined at the end, so that they never show up as a kernel's macros.
 */
#ifndef KLC_CUDA_STUB_H
#define KLC_CUDA_STUB_H

/* ---- execution space and declaration attributes (clang knows these natively) ---------- */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
/* __noinline__ is a keyword of clang's CUDA mode (it also accepts __attribute__((noinline))) */
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __cluster_dims__(...) __attribute__((cluster_dims(__VA_ARGS__)))
#define __maxnreg__(n) /* register cap: no clang attribute in 18; nothing to check */
#define __device_builtin__
#define __cudart_builtin__
#define CUDART_CB

typedef __SIZE_TYPE__ __klc_size_t;
typedef unsigned long long __klc_u64;

/* ---- built-in vector types: CUDA sizes and alignments ------------------------------------ */
#define __KLC_VEC(T, B, A1, A2, A4)                                                            \
  struct __attribute__((aligned(A1))) T##1 { B x; };                                        \
  struct __attribute__((aligned(A2))) T##2 { B x, y; };                                     \
  struct T##3 { B x, y, z; };                                                                 \
  struct __attribute__((aligned(A4))) T##4 { B x, y, z, w; };                               \
  __host__ __device__ inline T##1 make_##T##1(B x) { T##1 v; v.x = x; return v; }            \
  __host__ __device__ inline T##2 make_##T##2(B x, B y) {                                     \
    T##2 v; v.x = x; v.y = y; return v; }                                                     \
  __host__ __device__ inline T##3 make_##T##3(B x, B y, B z) {                                \
    T##3 v; v.x = x; v.y = y; v.z = z; return v; }                                            \
  __host__ __device__ inline T##4 make_##T##4(B x, B y, B z, B w) {                           \
    T##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }

__KLC_VEC(char, signed char, 1, 2, 4)
__KLC_VEC(uchar, unsigned char, 1, 2, 4)
__KLC_VEC(short, short, 2, 4, 8)
__KLC_VEC(ushort, unsigned short, 2, 4, 8)
__KLC_VEC(int, int, 4, 8, 16)
__KLC_VEC(uint, unsigned int, 4, 8, 16)
__KLC_VEC(long, long, 8, 16, 16)
__KLC_VEC(ulong, unsigned long, 8, 16, 16)
__KLC_VEC(longlong, long long, 8, 16, 16)
__KLC_VEC(ulonglong, unsigned long long, 8, 16, 16)
__KLC_VEC(float, float, 4, 8, 16)
__KLC_VEC(double, double, 8, 16, 16)
#undef __KLC_VEC

/* uint3 already exists above; dim3 converts to and from it like CUDA's */
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1,
                                     unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ constexpr operator uint3() const { return uint3{x, y, z}; }
};

/* ---- built-in variables ------------------------------------------------------------------- */
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;

/* ---- half precision: opaque 2-byte storage, as far as layout is concerned ---------------- */
struct __attribute__((aligned(2))) __half { unsigned short __x; };
struct __attribute__((aligned(4))) __half2 { __half x, y; };
struct __attribute__((aligned(2))) __nv_bfloat16 { unsigned short __x; };
struct __attribute__((aligned(4))) __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
__host__ __device__ __half __float2half(float);
__host__ __device__ __half __float2half_rn(float);
__host__ __device__ float __half2float(__half);
__host__ __device__ __half2 __floats2half2_rn(float, float);
__host__ __device__ __half2 __float2half2_rn(float);
__host__ __device__ float2 __half22float2(__half2);
__host__ __device__ __nv_bfloat16 __float2bfloat16(float);
__host__ __device__ float __bfloat162float(__nv_bfloat16);
__device__ __half __hadd(__half, __half);
__device__ __half __hmul(__half, __half);
__device__ __half __hfma(__half, __half, __half);
__device__ __half2 __hadd2(__half2, __half2);
__device__ __half2 __hmul2(__half2, __half2);
__device__ __half2 __hfma2(__half2, __half2, __half2);

/* ---- math: single and double precision, and the fast-math intrinsics -------------------- */
/* __device__ only, like clang's own CUDA math declarations: clang overloads on the execution
 * space, so these coexist with the host's <math.h>/<cmath> when a kernel includes them. */
#define __KLC_F1(name) __device__ float name(float);
#define __KLC_D1(name) __device__ double name(double);
#define __KLC_F2(name) __device__ float name(float, float);
#define __KLC_D2(name) __device__ double name(double, double);
__KLC_F1(sqrtf) __KLC_F1(rsqrtf) __KLC_F1(cbrtf) __KLC_F1(expf) __KLC_F1(exp2f)
__KLC_F1(exp10f) __KLC_F1(expm1f) __KLC_F1(logf) __KLC_F1(log2f) __KLC_F1(log10f)
__KLC_F1(log1pf) __KLC_F1(sinf) __KLC_F1(cosf) __KLC_F1(tanf) __KLC_F1(asinf)
__KLC_F1(acosf) __KLC_F1(atanf) __KLC_F1(sinhf) __KLC_F1(coshf) __KLC_F1(tanhf)
__KLC_F1(fabsf) __KLC_F1(floorf) __KLC_F1(ceilf) __KLC_F1(roundf) __KLC_F1(truncf)
__KLC_F1(rintf) __KLC_F1(erff) __KLC_F1(erfcf) __KLC_F1(normcdff)
__KLC_F2(powf) __KLC_F2(fmaxf) __KLC_F2(fminf) __KLC_F2(fmodf) __KLC_F2(atan2f)
__KLC_F2(copysignf) __KLC_F2(hypotf) __KLC_F2(fdividef)
__KLC_D1(sqrt) __KLC_D1(rsqrt) __KLC_D1(cbrt) __KLC_D1(exp) __KLC_D1(exp2) __KLC_D1(expm1)
__KLC_D1(log) __KLC_D1(log2) __KLC_D1(log10) __KLC_D1(log1p) __KLC_D1(sin) __KLC_D1(cos)
__KLC_D1(tan) __KLC_D1(tanh) __KLC_D1(fabs) __KLC_D1(floor) __KLC_D1(ceil) __KLC_D1(round)
__KLC_D1(trunc) __KLC_D1(erf)
__KLC_D2(pow) __KLC_D2(fmax) __KLC_D2(fmin) __KLC_D2(fmod) __KLC_D2(atan2)
__device__ float fmaf(float, float, float);
__device__ double fma(double, double, double);
/* CUDA's float overloads of the double names, usable in device code */
__KLC_F1(sqrt) __KLC_F1(exp) __KLC_F1(log) __KLC_F1(sin) __KLC_F1(cos) __KLC_F1(tanh)
__KLC_F1(fabs) __KLC_F1(floor) __KLC_F1(ceil) __KLC_F2(pow) __KLC_F2(fmax) __KLC_F2(fmin)
extern "C" __device__ int printf(const char* format, ...);
__device__ float __expf(float);
__device__ float __exp10f(float);
__device__ float __logf(float);
__device__ float __log2f(float);
__device__ float __log10f(float);
__device__ float __sinf(float);
__device__ float __cosf(float);
__device__ float __tanf(float);
__device__ float __powf(float, float);
__device__ float __fdividef(float, float);
__device__ float __frcp_rn(float);
__device__ float __fsqrt_rn(float);
__device__ float __saturatef(float);
__device__ float __fmaf_rn(float, float, float);
__device__ float __fmul_rn(float, float);
__device__ float __fadd_rn(float, float);
__device__ float __fdiv_rn(float, float);
__device__ double __fma_rn(double, double, double);
__device__ int __float2int_rn(float);
__device__ int __float2int_rz(float);
__device__ unsigned int __float2uint_rn(float);
__device__ float __int2float_rn(int);
__device__ float __int_as_float(int);
__device__ int __float_as_int(float);
__device__ float __uint_as_float(unsigned int);
__device__ unsigned int __float_as_uint(float);
__device__ int __popc(unsigned int);
__device__ int __popcll(unsigned long long);
__device__ int __clz(int);
__device__ int __clzll(long long);
__device__ int __ffs(int);
__device__ unsigned int __brev(unsigned int);
__device__ int __mul24(int, int);
__device__ unsigned int __umul24(unsigned int, unsigned int);
__device__ int __mulhi(int, int);
__device__ unsigned int __umulhi(unsigned int, unsigned int);
__device__ unsigned int __funnelshift_l(unsigned int, unsigned int, unsigned int);
__device__ unsigned int __funnelshift_r(unsigned int, unsigned int, unsigned int);
__device__ int min(int, int);
__device__ unsigned int min(unsigned int, unsigned int);
__device__ long long min(long long, long long);
__device__ float min(float, float);
__device__ double min(double, double);
__device__ int max(int, int);
__device__ unsigned int max(unsigned int, unsigned int);
__device__ long long max(long long, long long);
__device__ float max(float, float);
__device__ double max(double, double);
__device__ int abs(int);
#undef __KLC_F1
#undef __KLC_D1
#undef __KLC_F2
#undef __KLC_D2

/* ---- cached and streaming loads and stores: generic, so each keeps its operand's type ---- */
template <typename T> __device__ T __ldg(const T*);
template <typename T> __device__ T __ldcg(const T*);
template <typename T> __device__ T __ldca(const T*);
template <typename T> __device__ T __ldcs(const T*);
template <typename T> __device__ T __ldlu(const T*);
template <typename T> __device__ T __ldcv(const T*);
template <typename T> __device__ void __stcg(T*, T);
template <typename T> __device__ void __stcs(T*, T);
template <typename T> __device__ void __stwb(T*, T);
template <typename T> __device__ void __stwt(T*, T);

/* ---- synchronization and fences --------------------------------------------------------- */
__device__ void __syncthreads();
__device__ int __syncthreads_count(int);
__device__ int __syncthreads_and(int);
__device__ int __syncthreads_or(int);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ void __threadfence();
__device__ void __threadfence_block();
__device__ void __threadfence_system();
__device__ void __nanosleep(unsigned int);
__device__ long long clock64();
__device__ long long clock();

/* ---- warp intrinsics: generic, so a shuffle returns the type it was given --------------- */
template <typename T> __device__ T __shfl_sync(unsigned int mask, T var, int src, int width = 32);
template <typename T>
__device__ T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
template <typename T>
__device__ T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
template <typename T>
__device__ T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = 32);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ int __any_sync(unsigned int mask, int predicate);
__device__ int __all_sync(unsigned int mask, int predicate);
__device__ unsigned int __activemask();
template <typename T> __device__ unsigned int __match_any_sync(unsigned int mask, T value);
__device__ int __reduce_add_sync(unsigned int mask, int value);
__device__ unsigned int __reduce_add_sync(unsigned int mask, unsigned int value);
__device__ int __reduce_max_sync(unsigned int mask, int value);
__device__ int __reduce_min_sync(unsigned int mask, int value);

/* ---- atomics ----------------------------------------------------------------------------- */
#define __KLC_ATOMIC(name, T) __device__ T name(T* address, T val);
#define __KLC_ATOMICS(name)                                                                    \
  __KLC_ATOMIC(name, int) __KLC_ATOMIC(name, unsigned int)                                     \
  __KLC_ATOMIC(name, unsigned long long) __KLC_ATOMIC(name, long long)                         \
  __KLC_ATOMIC(name, float) __KLC_ATOMIC(name, double)
__KLC_ATOMICS(atomicAdd) __KLC_ATOMICS(atomicMax) __KLC_ATOMICS(atomicMin)
__KLC_ATOMICS(atomicExch) __KLC_ATOMICS(atomicSub)
__KLC_ATOMIC(atomicAnd, int) __KLC_ATOMIC(atomicAnd, unsigned int)
__KLC_ATOMIC(atomicOr, int) __KLC_ATOMIC(atomicOr, unsigned int)
__KLC_ATOMIC(atomicXor, int) __KLC_ATOMIC(atomicXor, unsigned int)
__KLC_ATOMIC(atomicAdd, __half2)
#undef __KLC_ATOMICS
#undef __KLC_ATOMIC
__device__ int atomicCAS(int* address, int compare, int val);
__device__ unsigned int atomicCAS(unsigned int* address, unsigned int compare, unsigned int val);
__device__ unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare,
                                        unsigned long long val);
__device__ unsigned short atomicCAS(unsigned short* address, unsigned short compare,
                                    unsigned short val);
__device__ unsigned int atomicInc(unsigned int* address, unsigned int val);
__device__ unsigned int atomicDec(unsigned int* address, unsigned int val);

/* ---- host runtime API: enough for launches and the usual allocation boilerplate ---------- */
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4
};
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9
};
extern "C" {
unsigned int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, __klc_size_t sharedMem = 0,
                                         cudaStream_t stream = 0);
cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim, __klc_size_t sharedMem = 0,
                              cudaStream_t stream = 0);
cudaError_t cudaMalloc(void** devPtr, __klc_size_t size);
cudaError_t cudaMallocManaged(void** devPtr, __klc_size_t size, unsigned int flags = 1);
cudaError_t cudaFree(void* devPtr);
cudaError_t cudaMemcpy(void* dst, const void* src, __klc_size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, __klc_size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, __klc_size_t count,
                               __klc_size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice);
cudaError_t cudaMemset(void* devPtr, int value, __klc_size_t count);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
}
template <typename T> cudaError_t cudaMalloc(T** devPtr, __klc_size_t size);
template <typename T>
cudaError_t cudaFuncSetAttribute(T* func, cudaFuncAttribute attr, int value);

/* ---- cooperative groups: the part kernels use ------------------------------------------- */
namespace cooperative_groups {
class thread_group {
 public:
  __device__ void sync() const;
  __device__ unsigned int thread_rank() const;
  __device__ unsigned int size() const;
  __device__ unsigned int num_threads() const;
};
class thread_block : public thread_group {
 public:
  __device__ dim3 group_index() const;
  __device__ dim3 thread_index() const;
  __device__ dim3 group_dim() const;
  __device__ dim3 dim_threads() const;
};
class grid_group : public thread_group {
 public:
  __device__ bool is_valid() const;
  __device__ unsigned long long num_blocks() const;
  __device__ unsigned long long block_rank() const;
};
template <unsigned int Size, typename ParentT = void>
class thread_block_tile : public thread_group {
 public:
  static constexpr unsigned int num_threads() { return Size; }
  static constexpr unsigned int size() { return Size; }
  __device__ unsigned int meta_group_rank() const;
  __device__ unsigned int meta_group_size() const;
  template <typename T> __device__ T shfl(T var, int src_rank) const;
  template <typename T> __device__ T shfl_up(T var, unsigned int delta) const;
  template <typename T> __device__ T shfl_down(T var, unsigned int delta) const;
  template <typename T> __device__ T shfl_xor(T var, unsigned int lane_mask) const;
  __device__ int any(int predicate) const;
  __device__ int all(int predicate) const;
  __device__ unsigned int ballot(int predicate) const;
};
__device__ thread_block this_thread_block();
__device__ grid_group this_grid();
template <unsigned int Size, typename ParentT>
__device__ thread_block_tile<Size> tiled_partition(const ParentT& parent);
__device__ thread_group tiled_partition(const thread_group& parent, unsigned int tile_size);
template <typename T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <typename T> struct less { __device__ T operator()(T a, T b) const { return a < b ? a : b; } };
template <typename T> struct greater { __device__ T operator()(T a, T b) const { return a > b ? a : b; } };
template <typename T> struct bit_and { __device__ T operator()(T a, T b) const { return a & b; } };
template <typename T> struct bit_or { __device__ T operator()(T a, T b) const { return a | b; } };
template <typename T> struct bit_xor { __device__ T operator()(T a, T b) const { return a ^ b; } };
template <typename Group, typename T, typename Op>
__device__ T reduce(const Group& group, T value, Op op);
}  // namespace cooperative_groups

/* ---- what nvcc's implicit cuda_runtime.h brings from the host's <math.h> ---------------- */
/* nvcc compiles `float m = -INFINITY;` and `M_PI` with no #include at all. Spelled as glibc
 * spells them, so that a kernel that includes <math.h> after this redefines nothing. */
#ifndef INFINITY
#define INFINITY (__builtin_inff ())
#endif
#ifndef NAN
#define NAN (__builtin_nanf (""))
#endif
#ifndef HUGE_VALF
#define HUGE_VALF (__builtin_huge_valf ())
#endif
#ifndef HUGE_VAL
#define HUGE_VAL (__builtin_huge_val ())
#endif
#ifndef M_PI
#define M_E		2.7182818284590452354	/* e */
#define M_LOG2E	1.4426950408889634074	/* log_2 e */
#define M_LOG10E	0.43429448190325182765	/* log_10 e */
#define M_LN2		0.69314718055994530942	/* log_e 2 */
#define M_LN10		2.30258509299404568402	/* log_e 10 */
#define M_PI		3.14159265358979323846	/* pi */
#define M_PI_2		1.57079632679489661923	/* pi/2 */
#define M_PI_4		0.78539816339744830962	/* pi/4 */
#define M_1_PI		0.31830988618379067154	/* 1/pi */
#define M_2_PI		0.63661977236758134308	/* 2/pi */
#define M_2_SQRTPI	1.12837916709551257390	/* 2/sqrt(pi) */
#define M_SQRT2	1.41421356237309504880	/* sqrt(2) */
#define M_SQRT1_2	0.70710678118654752440	/* 1/sqrt(2) */
#endif

#endif /* KLC_CUDA_STUB_H */

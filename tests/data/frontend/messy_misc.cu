/* A deliberately messy file: odd spacing, comments everywhere, K&R and Allman braces,
 * multi-line signatures, default arguments, function pointers, lambdas in kernels. */
#include<cuda_runtime.h>
#include <cstdio>
#pragma nv_diag_suppress 177

#define CHECK_LAST() do { cudaError_t e = cudaGetLastError(); if (e) printf("%s\n", cudaGetErrorString(e)); } while (0)
#define LAUNCH_1D(kernel, n, ...) kernel<<<((n) + 255) / 256, 256>>>(__VA_ARGS__)

typedef float (*binop_t)(float, float);

__device__ float add_op(float a, float b) { return a + b; }
__device__ float mul_op(float a, float b) { return a * b; }
__device__ binop_t d_ops[2] = {add_op, mul_op};

__global__ void
/* comment between specifier and name */
apply_binop( const float*__restrict__ a ,const float* __restrict__ b,
             float*       c,
             int          op,   // which op
             int          n )
{
    int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n){c[i]=d_ops[op](a[i],b[i]);}
}

__global__ void lambda_in_kernel(int *data, int n)
{
  auto sq = [] __device__ (int v) { return v * v; };
  for (int i = threadIdx.x; i < n; i += blockDim.x) data[i] = sq(data[i]);
}

__global__ void                                 __launch_bounds__(   64   )
spaced_out   (   double   * x   ,   int   n   )   {
    if ( threadIdx.x < n )  x [ threadIdx.x ] *= 2.0 ;
}

template<typename T,int N=4>__global__ void compact_template(T*p){
#pragma unroll
for(int i=0;i<N;++i)p[threadIdx.x*N+i]+=T(1);}

__global__ void goto_and_labels(int *p, int n) {
  int i = threadIdx.x;
  if (i >= n) goto done;
  p[i] = i;
done:
  return;
}

__global__ void switch_kernel(const int *kind, float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (kind[i]) {
    case 0: v[i] = 0.f; break;
    case 1: { v[i] = sqrtf(v[i]); break; }
    default:
      v[i] = -v[i];
  }
}

__global__ void unsigned_loops(unsigned *out, unsigned n) {
  for (unsigned i = threadIdx.x, j = 0; i < n; i += blockDim.x, ++j)
    out[i] = j;
  size_t k;
  for (k = 0; k < 3; k++) out[k] += 1;
  int m = 10;
  while (m-- > 0) { out[0] ^= m; }
}

__global__ void printf_kernel(const char *tag) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    printf("[%s] grid=(%d,%d,%d) block=(%d,%d,%d)\n", tag, gridDim.x, gridDim.y, gridDim.z, blockDim.x, blockDim.y, blockDim.z);
}

void host_side(float *a, float *b, float *c, int n) {
  apply_binop<<<(n + 127) / 128, 128>>>(a, b, c, 0, n);
  CHECK_LAST();
  LAUNCH_1D(printf_kernel, n, "host_side");
  compact_template<float><<<1, 32>>>(c);
  compact_template<int, 8><<<1, 32>>>((int *)c);
}

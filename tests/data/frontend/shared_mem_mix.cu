// Static and dynamic shared memory in every shape the front end must recognise.
#include <cuda_runtime.h>

#define TILE_DIM 32
#define BLOCK_ROWS 8
#define PAD 1

__global__ void transpose_padded(float *odata, const float *idata)
{
  __shared__ float tile[TILE_DIM][TILE_DIM + PAD];

  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  int width = gridDim.x * TILE_DIM;

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     tile[threadIdx.y+j][threadIdx.x] = idata[(y+j)*width + x];

  __syncthreads();

  x = blockIdx.y * TILE_DIM + threadIdx.x;  // transpose block offset
  y = blockIdx.x * TILE_DIM + threadIdx.y;

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     odata[(y+j)*width + x] = tile[threadIdx.x][threadIdx.y + j];
}

template <typename T, int kWarps>
__global__ void mixed_shared(const T *__restrict__ in, T *__restrict__ out, int n)
{
  __shared__ T warp_sums[kWarps];
  __shared__ int counter;
  static __shared__ float scale_cache[4], bias_cache[4];
  extern __shared__ __align__(16) unsigned char dynamic_raw[];
  T *staging = reinterpret_cast<T *>(dynamic_raw);
  volatile __shared__ bool done;

  if (threadIdx.x == 0) { counter = 0; done = false; }
  if (threadIdx.x < 4) { scale_cache[threadIdx.x] = 1.f; bias_cache[threadIdx.x] = 0.f; }
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  staging[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  T v = staging[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T s = 0;
    for (int w = 0; w < kWarps; ++w) s += warp_sums[w];
    out[blockIdx.x] = s * scale_cache[0] + bias_cache[0];
    atomicAdd(&counter, 1);
    done = true;
  }
}

__global__ void two_dynamic_views(float *out, int nf, int ni)
{
  extern __shared__ char smem_bytes[];
  float *fbuf = (float *)smem_bytes;
  int *ibuf = (int *)&fbuf[nf];
  for (int k = threadIdx.x; k < nf; k += blockDim.x) fbuf[k] = 0.f;
  for (int k = threadIdx.x; k < ni; k += blockDim.x) ibuf[k] = k;
  __syncthreads();
  out[threadIdx.x] = fbuf[threadIdx.x % nf] + ibuf[threadIdx.x % ni];
}

__global__ void shared_2d_dynamic(float *p, int w)
{
  extern __shared__ float rows[][33];
  rows[threadIdx.y][threadIdx.x] = p[threadIdx.y * w + threadIdx.x];
  __syncthreads();
  p[threadIdx.x * w + threadIdx.y] = rows[threadIdx.x][threadIdx.y];
}

__global__ void shared_struct(float2 *io)
{
  struct Pair { float a, b; };
  __shared__ Pair pairs[64];
  __shared__ float2 f2[64], g2[64];
  pairs[threadIdx.x].a = io[threadIdx.x].x;
  pairs[threadIdx.x].b = io[threadIdx.x].y;
  f2[threadIdx.x] = make_float2(pairs[threadIdx.x].b, pairs[threadIdx.x].a);
  g2[threadIdx.x] = f2[63 - threadIdx.x];
  __syncthreads();
  io[threadIdx.x] = g2[threadIdx.x];
}

void launch_mixed(const float *in, float *out, int n, cudaStream_t s)
{
  constexpr int threads = 256;
  size_t smem = threads * sizeof(float);
  mixed_shared<float, threads / 32><<<(n + threads - 1) / threads, threads, smem, s>>>(in, out, n);
  two_dynamic_views<<<1, 128, 64 * sizeof(float) + 64 * sizeof(int)>>>(out, 64, 64);
  transpose_padded<<<dim3(n / TILE_DIM, n / TILE_DIM), dim3(TILE_DIM, BLOCK_ROWS)>>>(out, in);
}

#include <cuda_runtime.h>
#include <math.h>

#define SOFTENING 1e-9f

typedef struct { float4 *pos, *vel; } BodySystem;

__device__ float3 bodyBodyInteraction(float4 bi, float4 bj, float3 ai)
{
  float3 r;
  r.x = bj.x - bi.x;
  r.y = bj.y - bi.y;
  r.z = bj.z - bi.z;
  float distSqr = r.x * r.x + r.y * r.y + r.z * r.z + SOFTENING;
  float invDist = rsqrtf(distSqr);
  float invDist3 = invDist * invDist * invDist;
  float s = bj.w * invDist3;
  ai.x += r.x * s;
  ai.y += r.y * s;
  ai.z += r.z * s;
  return ai;
}

template <int BLOCK_SIZE>
__global__ void bodyForce(float4 *p, float4 *v, float dt, int n)
{
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) {
    float3 acc = make_float3(0.0f, 0.0f, 0.0f);
    float4 myPos = p[i];
    for (int tile = 0; tile < gridDim.x; tile++) {
      __shared__ float4 spos[BLOCK_SIZE];
      float4 tpos = p[tile * blockDim.x + threadIdx.x];
      spos[threadIdx.x] = tpos;
      __syncthreads();
      #pragma unroll 32
      for (int j = 0; j < BLOCK_SIZE; j++) {
        acc = bodyBodyInteraction(myPos, spos[j], acc);
      }
      __syncthreads();
    }
    v[i].x += dt * acc.x;
    v[i].y += dt * acc.y;
    v[i].z += dt * acc.z;
  }
}

__global__ void integrate(float4 *__restrict__ p, const float4 *__restrict__ v, float dt, int n)
{
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) {
    p[i].x += v[i].x * dt;
    p[i].y += v[i].y * dt;
    p[i].z += v[i].z * dt;
  }
}

void step(BodySystem sys, float dt, int nBodies)
{
  const int nBlocks = (nBodies + 255) / 256;
  bodyForce<256><<<nBlocks, 256>>>(sys.pos, sys.vel, dt, nBodies);
  integrate<<<nBlocks, 256>>>(sys.pos, sys.vel, dt, nBodies);
}

// A tile row written to shared memory as float4, from a register and from an expression.
__global__ void store(const float* __restrict__ x, float* __restrict__ out) {
    __shared__ __align__(16) float tile[8][128];
    float4 v = reinterpret_cast<const float4*>(x)[threadIdx.x];
    {
        tile[threadIdx.x / 32][(threadIdx.x % 32) * 4] = v.x;
        tile[threadIdx.x / 32][((threadIdx.x % 32) * 4) + 1] = v.y;
        tile[threadIdx.x / 32][((threadIdx.x % 32) * 4) + 2] = v.z;
        tile[threadIdx.x / 32][((threadIdx.x % 32) * 4) + 3] = v.w;
    }
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x % 8][threadIdx.x / 8];
}

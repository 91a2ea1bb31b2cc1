// The stored value is an expression: v.x would evaluate it four times. The rule must refuse.
__global__ void store(float* __restrict__ out) {
    __shared__ __align__(16) float tile[8][128];
    *reinterpret_cast<float4*>(&tile[threadIdx.x / 32][(threadIdx.x % 32) * 4]) = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x % 8][threadIdx.x / 8];
}

// Fragments read from a shared tile as float4.
__global__ void frag(float* out) {
    __shared__ __align__(16) float tile[8][64];
    tile[threadIdx.x / 64][threadIdx.x % 64] = threadIdx.x;
    __syncthreads();
    float4 t = *reinterpret_cast<const float4*>(&tile[threadIdx.x / 64][(threadIdx.x % 16) * 4]);
    out[threadIdx.x] = t.x + t.y + t.z + t.w;
}

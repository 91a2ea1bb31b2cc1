__global__ void sq(const float* __restrict__ x, float* __restrict__ y) {
    __shared__ __align__(16) float t[32][32];
    const int tid = threadIdx.x;
    for (int r = 0; r < 32; ++r) {
        t[r][tid] = x[blockIdx.x * 1024 + r * 32 + tid];
    }
    __syncthreads();
    float acc = 0.0f;
    if (tid < 8) {
        for (int r = 0; r < 32; ++r) {
            float4 v = make_float4(t[r][tid * 4], t[r][(tid * 4) + 1], t[r][(tid * 4) + 2], t[r][(tid * 4) + 3]);
            acc += (v.x + v.y) + (v.z + v.w);
        }
    }
    y[blockIdx.x * 32 + tid] = acc;
}

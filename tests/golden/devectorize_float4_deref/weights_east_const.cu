// A GEMV step loading weights through a dereferenced east-const float4 cast.
__device__ __forceinline__ void load4(float const* p, float* dst) {
    float4 v = *reinterpret_cast<float4 const*>(p);
    dst[0] = v.x;
    dst[1] = v.y;
    dst[2] = v.z;
    dst[3] = v.w;
}

__global__ void gemv4(const float* w, const float* x, float* y, int k) {
    float acc = 0.0f;
    for (int c = 4 * threadIdx.x; c < k; c += 4 * blockDim.x) {
        float wv[4];
        load4(w + blockIdx.x * k + c, wv);
        acc += wv[0] * x[c] + wv[1] * x[c + 1] + wv[2] * x[c + 2] + wv[3] * x[c + 3];
    }
    atomicAdd(&y[blockIdx.x], acc);
}

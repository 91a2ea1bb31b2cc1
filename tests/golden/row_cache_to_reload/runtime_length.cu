// The cache length is a runtime value: not a register array, the rule must refuse.
__global__ void twice(const float* x, float* y, int nv) {
    float4 cache[64];
    for (int k = 0; k < nv; ++k) {
        const int c = threadIdx.x + 32 * k;
        if (c < 64) {
            float4 v = reinterpret_cast<const float4*>(x)[c];
            cache[k] = v;
        }
    }
    __syncwarp();
    for (int k = 0; k < nv; ++k) {
        const int c = threadIdx.x + 32 * k;
        if (c < 64) {
            float4 v = cache[k];
            y[c] = v.x + v.y + v.z + v.w;
        }
    }
}

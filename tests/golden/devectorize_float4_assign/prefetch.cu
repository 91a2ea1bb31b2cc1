// A float4 register reloaded inside a loop.
__global__ void k(const float* __restrict__ a, float* __restrict__ out, int n4) {
    float4 r = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        r = reinterpret_cast<const float4*>(a)[i];
        s += r.x + r.y + r.z + r.w;
    }
    out[threadIdx.x] = s;
}

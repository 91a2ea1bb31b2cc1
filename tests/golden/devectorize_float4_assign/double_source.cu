// The source holds doubles: the rule must refuse.
__global__ void k(const double* __restrict__ a, float* __restrict__ out, int n4) {
    float4 r;
    r = reinterpret_cast<const float4*>(a)[threadIdx.x];
    out[threadIdx.x] = r.x;
}

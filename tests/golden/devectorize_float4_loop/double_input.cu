// The buffer holds doubles: four of them are not one float4, the rule must refuse.
__global__ void sum4d(const double* __restrict__ x, double* out, int n) {
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += blockDim.x * gridDim.x) {
        float4 v = reinterpret_cast<const float4*>(x)[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    for (int i = 4 * (n / 4) + (blockIdx.x * blockDim.x + threadIdx.x); i < n; i += blockDim.x * gridDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}

// Each warp's partial sum parked at its warp's slot: the warp index by a division.
__global__ void warp_partials(float* partial, const float* x, int n) {
    const unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    float v = i < n ? x[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    if ((tid & 31) == 0) {
        partial[blockIdx.x * 8 + (tid >> 5)] = v;
    }
}

// The loop already takes one row per step (R = 1): nothing to fold, the rule must refuse.
__global__ void copy_tile(const float* src, float* dst, int n) {
    for (int j = 0; j < 32; j += 1) {
        if (threadIdx.y + j < n) {
            dst[(threadIdx.y + j) * 32 + threadIdx.x] = src[(threadIdx.y + j) * 32 + threadIdx.x];
        }
    }
}

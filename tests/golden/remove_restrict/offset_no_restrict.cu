// x has no __restrict__ to remove: the rule must refuse.
__global__ void rowsum(const float* x, float* out, int n) {
    const float* row = x + (size_t)blockIdx.x * n;
    out[blockIdx.x] = row[0];
}

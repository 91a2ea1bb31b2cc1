// A const 32-bit index in a library kernel without a klc-spec: the const spelling matches
// like `int i` does, and is refused for the same reason (nothing bounds n, so the
// grid-stride step could pass INT_MAX near the end of a large array).
__global__ void square_inplace(float* v, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        v[i] = v[i] * v[i];
    }
}

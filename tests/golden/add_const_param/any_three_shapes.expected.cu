// One parameter per branch of add_const_param's `anchor any`, each in its own spelling:
// `float *a` read as a[i], `float* b` read through a row pointer b + off, `float * c` read
// through reinterpret_cast<const float4*>; the output is never made const.
__global__ void three_reads(const float *a, const float* b, const float * c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i + 3 < n) {
        const float* row = b + 4 * i;
        const float4 v = reinterpret_cast<const float4*>(c)[i];
        out[i] = a[i] + row[0] + v.x + v.y + v.z + v.w;
    }
}

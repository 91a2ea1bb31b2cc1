// The three shapes of a const read, one parameter each (`const float *a` subscripted,
// `const float* b` offset, `const float * c` read as const float4): one application drops
// every const.
__global__ void three_reads(float *a, float* b, float * c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i + 3 < n) {
        const float* row = b + 4 * i;
        const float4 v = reinterpret_cast<const float4*>(c)[i];
        out[i] = a[i] + row[0] + v.x + v.y + v.z + v.w;
    }
}

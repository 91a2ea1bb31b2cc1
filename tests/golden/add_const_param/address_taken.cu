__global__ void copy(float *dst, float *src, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
__global__ void copy_twice(float *dst, float *src, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = 2.0f * src[i];
}
void launch(float *d, float *s, int n, bool twice) {
    void (*kernel)(float *, float *, int);
    kernel = twice ? &copy_twice : &copy;
    kernel<<<(n + 255) / 256, 256>>>(d, s, n);
}

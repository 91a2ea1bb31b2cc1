// The hinted load on the device, the plain load elsewhere: one macro, two definitions.
#ifdef __CUDA_ARCH__
#define LOAD_STREAM(ptr) __ldcs((ptr))
#else
#define LOAD_STREAM(ptr) (*(ptr))
#endif

__global__ void stream_add(float* y, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = LOAD_STREAM(a + i) + LOAD_STREAM(b + i);
    }
}

// A macro of one argument that is not a load: left alone.
#define TWICE(v) ((v) + (v))

__global__ void twice(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = TWICE(x[i]);
    }
}

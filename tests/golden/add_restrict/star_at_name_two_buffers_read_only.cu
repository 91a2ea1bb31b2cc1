__global__ void dot_partial(double *partial, const float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0.0;
    for (int k = i; k < n; k += blockDim.x * gridDim.x)
        s += (double)a[k] * b[k];
    partial[i] = s;
}

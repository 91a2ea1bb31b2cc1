__global__ void add(const float* a, float* b, int n) { b[threadIdx.x] = a[threadIdx.x]; }
void run(const float* a, float* b, int n) { add<<<1, 32>>>(a, b, n); }

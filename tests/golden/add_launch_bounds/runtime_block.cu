#include <cstdlib>
__global__ void bias_backward(float* dbias, const float* dout, int B, int OC) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= OC) { return; }
    float sum = 0.0;
    for (int b = 0; b < B; b++) { sum += dout[b * OC + o]; }
    dbias[o] += sum;
}
int main(int argc, char **argv) {
    int B = 64, OC = 768;
    int block_size = argc > 1 ? atoi(argv[1]) : 256;
    bias_backward<<<(OC + block_size - 1) / block_size, block_size>>>(nullptr, nullptr, B, OC);
    return 0;
}

/* klc-spec
kernel: block_sum
template: {BLOCK_SIZE: 256}
sizes: {n: 67108864}
args:
  - {name: in, shape: [n], role: in, init: "normal(1, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
bytes: 4 * n + 4 * ceil_div(n, BLOCK_SIZE)
flops: n
tolerance: {rtol: 0.0001, atol: 0.00001}
*/
// family: full-reduction
// style: template block size, interleaved addressing with tid % (2 s) (the textbook first reduction), one element per thread, host main() that finishes on the CPU
// First stage of a sum: partial[b] = sum of the BLOCK_SIZE elements of block b (the last
// block zero-pads). The host adds the partials.
// bytes: in read once, partials written. flops: one add per element.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

template <int BLOCK_SIZE>
__global__ void block_sum(const float* in, float* partial, int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < BLOCK_SIZE; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

int main() {
    const int n = 1 << 22;
    const int blocks = (n + 255) / 256;
    std::vector<float> h(n, 1.0f), hp(blocks);
    float *d_in, *d_partial;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_partial, blocks * sizeof(float));
    cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    block_sum<256><<<blocks, 256>>>(d_in, d_partial, n);
    cudaMemcpy(hp.data(), d_partial, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    double total = 0.0;
    for (int b = 0; b < blocks; b++) total += hp[b];
    printf("sum = %.1f (expected %d)\n", total, n);
    cudaFree(d_in);
    cudaFree(d_partial);
    return 0;
}

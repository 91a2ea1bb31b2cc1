/* klc-spec
kernel: byte_histogram
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 37}
args:
  - {name: data, shape: [n], role: in, init: "randint(0, 256)"}
  - {name: hist, shape: [256], role: inout, init: "randint(0, 1000)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n + 2 * 4 * 256
flops: 0
*/
// A first byte histogram, one global atomic per element, its index a const unsigned local.
__global__ void byte_histogram(const unsigned* __restrict__ data, unsigned int* hist,
                               unsigned n) {
    __shared__ unsigned int block_counts[1024];
    for (int b = threadIdx.x; b < 1024; b += blockDim.x) {
        block_counts[b] = 0;
    }
    __syncthreads();
    {
        const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            atomicAdd(&block_counts[data[i] & 255u], 1u);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 1024; b += blockDim.x) {
        unsigned int c = block_counts[b];
        if (c != 0) {
            atomicAdd(&hist[b], c);
        }
    }
}

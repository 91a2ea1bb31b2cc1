/* klc-spec
kernel: class_counts
template: {BLOCK: 128}
sizes: {n: 1000003, classes: 200}
verify_sizes:
  - {n: 4099, classes: 200}
  - {n: 37, classes: 200}
args:
  - {name: labels, shape: [n], role: in, init: "randint(0, classes)"}
  - {name: counts, shape: [classes], role: inout, init: "randint(0, 100)"}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
*/
// Signed int counters, a templated block size, the label read into a local first.
template <int BLOCK>
__global__ void class_counts(const int* labels, int* counts, int n) {
    __shared__ int block_counts[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        block_counts[b] = 0;
    }
    __syncthreads();
    {
        int i = blockIdx.x * BLOCK + threadIdx.x;
        if (i < n) {
            const int c = labels[i];
            atomicAdd(&block_counts[c], 1);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        int c = block_counts[b];
        if (c != 0) {
            atomicAdd(&counts[b], c);
        }
    }
}

template __global__ void class_counts<128>(const int*, int*, int);

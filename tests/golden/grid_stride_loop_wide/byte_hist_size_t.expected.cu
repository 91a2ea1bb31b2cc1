/* klc-spec
kernel: byte_histogram
sizes: {n: 67108864}
verify_sizes:
  - {n: 100003}
  - {n: 37}
args:
  - {name: data, shape: [n], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: hist, shape: [256], type: "unsigned int*", role: inout, init: "randint(0, 100)"}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 512), 32)"]
block: [512]
bytes: n + 2048
flops: 0
*/
// A byte histogram over more than 2^31 bytes: a private copy per block, a size_t index
// whose start is cast before the multiply.
__global__ void byte_histogram(const unsigned char* data, unsigned int* hist, size_t n) {
    __shared__ unsigned int local[256];
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        local[k] = 0;
    }
    __syncthreads();
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += (size_t)blockDim.x * gridDim.x) {
        atomicAdd(&local[data[idx]], 1u);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        unsigned int v = local[k];
        if (v != 0) {
            atomicAdd(&hist[k], v);
        }
    }
}

/* klc-spec
kernel: histo_kernel
sizes: {size: 134217728}
verify_sizes:
  - {size: 1048576}
  - {size: 100003}
  - {size: 7}
args:
  - {name: buffer, shape: [size], role: in, init: "randint(0, 256)"}
  - {name: size, value: size}
  - {name: histo, shape: [256], role: inout, init: "randint(0, 100)"}
grid: [1056]
block: [256]
bytes: size + 2 * 4 * 256
flops: 0
*/
// A byte histogram in the spelling of the textbooks: a grid-stride `while` loop over the
// buffer, one global atomicAdd per byte, a fixed grid of a few blocks per SM.
__global__ void histo_kernel(unsigned char *buffer, long size, unsigned int *histo) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int stride = blockDim.x * gridDim.x;
    __shared__ unsigned int temp[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        temp[b] = 0;
    }
    __syncthreads();
    while (i < size) {
        atomicAdd(&temp[buffer[i]], 1);
        i += stride;
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned int c = temp[b];
        if (c != 0) {
            atomicAdd(&histo[b], c);
        }
    }
}

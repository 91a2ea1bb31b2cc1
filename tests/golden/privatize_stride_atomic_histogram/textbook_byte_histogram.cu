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
    while (i < size) {
        atomicAdd(&(histo[buffer[i]]), 1);
        i += stride;
    }
}

/* klc-spec
kernel: byte_histogram
sizes: {size: 134217728}
verify_sizes:
  - {size: 1048576}
  - {size: 100003}
  - {size: 7}
args:
  - {name: buffer, shape: [size], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: size, value: size}
  - {name: histo, shape: [256], type: "unsigned int*", role: inout, init: "randint(0, 100)"}
grid: [1056]
block: [256]
bytes: size + 2 * 4 * 256
flops: 0
*/
// Histogram of the bytes of a buffer into 256 bins, the expert of the histogram_stride
// lineage, written in the spelling of the textbooks: a fixed grid of a few blocks per SM, each
// thread walking the buffer with a grid-stride `while` loop. One optimization on top
// (README.md names the pass that removes it):
//   - a private histogram per block in shared memory: the block zeroes 256 bins, counts its
//     bytes into them with shared-memory atomics, and after a barrier adds each non-zero bin
//     to the global bins with one global atomic, instead of one global atomic per byte on
//     one of 256 addresses.
// bytes: the buffer read once, the bins read and written. flops: none.
#define BINS 256

__global__ void byte_histogram(const unsigned char *buffer, long size, unsigned int *histo) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int stride = blockDim.x * gridDim.x;
    __shared__ unsigned int temp[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        temp[b] = 0;
    }
    __syncthreads();
    while (i < size) {
        atomicAdd(&temp[buffer[i]], 1);
        i += stride;
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int c = temp[b];
        if (c != 0) {
            atomicAdd(&histo[b], c);
        }
    }
}

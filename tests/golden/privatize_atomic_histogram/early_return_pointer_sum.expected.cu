/* klc-spec
kernel: class_hist
sizes: {n: 2097152, num_classes: 1000}
verify_sizes:
  - {n: 100003, num_classes: 1000}
  - {n: 777, num_classes: 1000}
args:
  - {name: targets, shape: [n], role: in, init: "randint(0, num_classes)"}
  - {name: hist, shape: [num_classes], role: inout, init: "randint(0, 100)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// int64 labels, int counters, an early return, the bin's address as a pointer sum.
__global__ void class_hist(const long *targets, int *hist, long n) {
    __shared__ int block_counts[1024];
    for (int b = threadIdx.x; b < 1024; b += blockDim.x) {
        block_counts[b] = 0;
    }
    __syncthreads();
    {
        long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            atomicAdd(&block_counts[targets[i]], 1);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 1024; b += blockDim.x) {
        int c = block_counts[b];
        if (c != 0) {
            atomicAdd(&hist[b], c);
        }
    }
}

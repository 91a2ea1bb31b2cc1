/* klc-spec
kernel: max_label
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: labels, shape: [n], role: in, init: "randint(0, 100000)"}
  - {name: out, shape: [1], role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
*/
// The largest label: each warp takes the maximum of its lanes with shuffles, the warp leaders
// park theirs in shared memory, warp 0 takes the maximum of those and publishes it with an
// integer atomicMax. The start INT_MIN is max's identity on ints.
#include <climits>
__global__ void max_label(const int* labels, int* out, int n) {
    __shared__ int warp_max[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int best = INT_MIN;
    if (i < n) {
        best = labels[i];
    }
    for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_down_sync(0xffffffff, best, o));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = best;
    __syncthreads();
    if (threadIdx.x < 32) {
        best = threadIdx.x < 8 ? warp_max[threadIdx.x] : INT_MIN;
        for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_down_sync(0xffffffff, best, o));
        if (threadIdx.x == 0) atomicMax(out, best);
    }
}

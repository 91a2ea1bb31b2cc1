/* klc-spec
kernel: max_offset
sizes: {n: 1048576}
args:
  - {name: d, shape: [n], role: in, init: "randint(-1000, 1000)"}
  - {name: out, shape: [1], role: inout, init: "randint(-5000, -4000)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
*/
// Starts at 0, which is not max's identity on offsets that may all be negative: every
// thread's start would join the result (a block of only negative offsets would give 0).
__global__ void max_offset(const int* d, int* out, int n) {
    __shared__ int s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int m = 0;
    if (i < n) {
        m = d[i];
    }
    s[threadIdx.x] = m;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] = max(s[threadIdx.x], s[threadIdx.x + k]);
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax(out, s[0]);
}

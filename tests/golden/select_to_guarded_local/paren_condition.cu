/* klc-spec
kernel: partial_sums
template: {BLOCK: 256}
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: normal}
  - {name: partial, shape: ["ceil_div(n, BLOCK)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
bytes: 4 * n
flops: n
*/
// The first stage of a sum as first versions write it: the element or zero, straight into the
// thread's shared slot, the condition in parentheses.
template <int BLOCK>
__global__ void partial_sums(const float* in, float* partial, int n) {
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

/* klc-spec
kernel: max_signed
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: [1], role: inout, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
*/
// The integer atomicMax of the bits of floats that may be negative: the bits do not order as
// the floats do, so the blocks' grouping changes the result.
__global__ void max_signed(const float* x, float* out, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float m = -INFINITY;
    if (i < n) {
        m = x[i];
    }
    s[threadIdx.x] = m;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + k]);
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax((int*)out, __float_as_int(s[0]));
}

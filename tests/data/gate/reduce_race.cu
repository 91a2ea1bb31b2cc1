/* klc-spec
kernel: reduce_sum
template: {BLOCK: 256}
sizes: {n: 33554432}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK * 8)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK * 8)"]
block: [BLOCK]
bytes: 4 * n + 4 * ceil_div(n, BLOCK * 8)
flops: n
*/
// Bad: the tree step has lost its __syncthreads: warps read partial sums other warps have
// not written yet (a race). Otherwise the reference bench/examples/reduce_sum.cu.
template <int BLOCK>
__global__ void reduce_sum(const float* __restrict__ x, float* __restrict__ partial, int n) {
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    long base = (long)blockIdx.x * BLOCK * 8;
    float acc = 0.0f;
    for (int k = 0; k < 8; ++k) {
        long i = base + (long)k * BLOCK + tid;
        if (i < n) {
            acc += x[i];
        }
    }
    s[tid] = acc;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}

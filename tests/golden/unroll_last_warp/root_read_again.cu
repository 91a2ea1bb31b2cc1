/* klc-spec
kernel: block_sums
template: {BLOCK: 128}
sizes: {n: 16777216}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: sums, shape: ["ceil_div(n, BLOCK)"], role: out, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
bytes: 4 * n
flops: n
tolerance: {rtol: 0.001, atol: 0.001}
*/
// Thread 0 reads the tree's root again after the tree: with the last warp unrolled, the root
// no longer holds the total.
template <int BLOCK>
__global__ void block_sums(const float* x, float* sums, size_t n)
{
    __shared__ float sdata[BLOCK];
    size_t i = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    float s = 0.0f;
    if (i < n) s = x[i];
    sdata[threadIdx.x] = s;
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k)
            sdata[threadIdx.x] += sdata[threadIdx.x + k];
        __syncthreads();
    }
    s = sdata[0];
    if (threadIdx.x == 0) sums[blockIdx.x] = sdata[0];
}

/* klc-spec
kernel: block_sums_early_exit
sizes: {n: 999946}
verify_sizes:
  - {n: 999946}
  - {n: 4099}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: sums, shape: ["ceil_div(n, 256)"], role: out, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
tolerance: {rtol: 0.001, atol: 0.001}
*/
// Out-of-range threads store a zero and leave before the tree. In the last block of n =
// 999946 only 10 threads stay: warp 0's lanes 10..31 have exited, and a __syncwarp() over
// the full warp (the tree's last levels unrolled) would wait on exited lanes, which is
// undefined.
__global__ void block_sums_early_exit(const float *x, float *sums, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    if (i >= n) return;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k)
            s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = s[0];
}

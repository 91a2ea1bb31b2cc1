/* klc-spec
kernel: count_sum
sizes: {n: 2147000000}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: [1]
block: [1024]
bytes: 4 * n + 4
flops: n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Near miss: an int index with n within 1024 * 264 of INT_MAX: i += blockDim.x * gridDim.x
// would overflow where i += blockDim.x does not.
__global__ void count_sum(const float* x, float* out, int n) {
    __shared__ float buf[1024];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        s += x[i];
    }
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = buf[0];
}

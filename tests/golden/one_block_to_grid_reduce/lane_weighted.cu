/* klc-spec
kernel: weighted_sum
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: w, shape: [32], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: [1]
block: [1024]
bytes: 4 * n + 4
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Near miss: each term is weighted by the lane that reads it; with a grid, element i would
// meet another lane's weight.
__global__ void weighted_sum(const float* x, const float* w, float* out, int n) {
    __shared__ float buf[1024];
    int lane = threadIdx.x % 32;
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        s += x[i] * w[lane];
    }
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = buf[0];
}

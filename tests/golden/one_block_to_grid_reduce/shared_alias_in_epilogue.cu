/* klc-spec
kernel: sum_pair
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [2], role: out}
  - {name: n, value: n}
grid: [1]
block: [1024]
bytes: 4 * n + 8
flops: n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Near miss: the epilogue reads the tree's second cell through a pointer declared before
// the sum; with a grid it would hold the last block's cell, not the one block's.
__global__ void sum_pair(const float* x, float* out, size_t n) {
    __shared__ float buf[1024];
    const float* cells = buf;
    float s = 0.0f;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        s += x[i];
    }
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = buf[0];
        out[1] = cells[1];
    }
}

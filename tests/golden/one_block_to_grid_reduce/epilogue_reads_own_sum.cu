/* klc-spec
kernel: sum_and_first
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
// Near miss: the epilogue also stores thread 0's own strided sum, which a grid would
// change (thread 0 of the last block holds another share).
__global__ void sum_and_first(const float* x, float* out, size_t n) {
    __shared__ float buf[1024];
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
        out[1] = s;
    }
}

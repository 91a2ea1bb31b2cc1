/* klc-spec
kernel: sum768
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: [1]
block: [768]
bytes: 4 * n + 4
flops: n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Near miss: 768 threads; the halving tree does not add every thread's value (the kernel's
// own bug), and other blocks would drop other values.
__global__ void sum768(const float* x, float* out, size_t n) {
    __shared__ float buf[768];
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
    if (threadIdx.x == 0) out[0] = buf[0];
}

/* klc-spec
kernel: mean_loss
sizes: {n: 16777216}
args:
  - {name: losses, shape: [n], role: in, init: "uniform(0, 10)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: [1]
block: [1024]
bytes: 4 * n + 4
flops: n
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// family: full-reduction
// style: a single block strides over the whole array, then a shared-memory tree; size_t loop, division by n at the end
// out[0] = mean of losses[0..n). One block of 1024 threads does all of it.
// bytes: losses read once, out written. flops: one add per element.
__global__ void mean_loss(const float* losses, float* out, size_t n) {
    __shared__ float acc[1024];
    float s = 0.0f;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        s += losses[i];
    }
    acc[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) acc[threadIdx.x] += acc[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = acc[0] / n;
}

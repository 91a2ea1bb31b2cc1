/* klc-spec
kernel: crossentropy_softmax_backward
sizes: {BT: 8192, V: 8192}
verify_sizes:
  - {BT: 64, V: 2048}
  - {BT: 33, V: 1001}
  - {BT: 2, V: 5}
args:
  - {name: dlogits, shape: [BT, V], role: out}
  - {name: logits, shape: [BT, V], role: in, init: "normal(0, 3)"}
  - {name: dlosses, shape: [BT], role: in, init: "uniform(0.1, 1)"}
  - {name: targets, shape: [BT], role: in, init: "randint(0, V)"}
  - {name: BT, value: BT}
  - {name: V, value: V}
grid: [BT]
block: [256]
bytes: 8 * BT * V + 8 * BT
flops: 6 * BT * V
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// family: row-reduction
// style: block per row, shared-memory tree of blockDim.x (a power of two), if-style max in the per-thread loop, a fixed 1024-float shared array, 64-bit row offsets
// Fused softmax and cross-entropy backward: for row i,
//   dlogits[i, v] = (softmax(logits[i])[v] - (v == targets[i])) * dlosses[i].
// One block per row: block max, block sum of exponentials, then the gradient.
// bytes: logits read, dlogits written (8 BT V), dlosses and targets (8 BT).
// flops: max, subtract, add, then subtract, multiply, scale (6 per element).
__global__ void crossentropy_softmax_backward(float* dlogits, const float* logits,
                                              const float* dlosses, const int* targets,
                                              int BT, int V) {
    __shared__ float smem[1024];
    int i = blockIdx.x;
    int tid = threadIdx.x;
    const float* x = logits + (size_t)i * V;
    float* dx = dlogits + (size_t)i * V;

    float m = -INFINITY;
    for (int v = tid; v < V; v += blockDim.x) {
        if (x[v] > m) m = x[v];
    }
    smem[tid] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s && smem[tid + s] > smem[tid]) smem[tid] = smem[tid + s];
        __syncthreads();
    }
    float maxval = smem[0];
    __syncthreads();

    float sum = 0.0f;
    for (int v = tid; v < V; v += blockDim.x) {
        sum += expf(x[v] - maxval);
    }
    smem[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    float inv_sum = 1.0f / smem[0];

    float dloss = dlosses[i];
    int target = targets[i];
    for (int v = tid; v < V; v += blockDim.x) {
        float p = expf(x[v] - maxval) * inv_sum;
        float indicator = v == target ? 1.0f : 0.0f;
        dx[v] = (p - indicator) * dloss;
    }
}

/* klc-spec
kernel: mse_loss
sizes: {n: 4194304}
args:
  - {name: pred, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: target, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: loss, shape: [1], role: out}
  - {name: n, value: n}
grid: ["(1) * 264"]
block: [512]
bytes: 8 * n + 4
flops: 3 * n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
#define THREADS 512

// Mean squared error in one block: declarations between the accumulator and the loop, a
// temporary in the loop body, a 64-bit index, a scale the epilogue reads.
__global__ void mse_loss(const float* pred, const float* target, float* loss, long n)
{
    static float partials[264];
    static unsigned int ticket;
    __shared__ float partial[THREADS];
    const int tid = threadIdx.x;
    float acc = 0.0f;
    const float scale = 1.0f / (float)n;
    for (long i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        float d = pred[i] - target[i];
        acc += d * d;
    }
    partial[tid] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = partial[0];
        __threadfence();
        if (atomicAdd(&ticket, 1u) == gridDim.x - 1) {
            __threadfence();
            float total = 0.0f;
            for (unsigned int b = 0; b < gridDim.x; ++b) {
                total += __ldcg(&partials[b]);
            }
            partial[0] = total;
            ticket = 0;
            loss[0] = partial[0] * scale;
        }
    }
}

/* klc-spec
kernel: block_partials
sizes: {n: 1048576}
verify_sizes:
  - {n: 4099}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 512)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 512), 4)"]
block: ["ceil_div((512) * 4, 16)"]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A #define'd partition of 512 elements in the shared tree of sequential addressing, signed
// thread and element indices and tree stride, and a host launch that spells the grid as a
// ceiling division by the macro and the block as the macro, with a stream.
#define BLOCK 512

__global__ void block_partials(const float* in, float* out, int n) {
    __shared__ float partials[32 * 4];
    int tid = threadIdx.x;
    int i = (blockIdx.x * 4 + tid / 32) * BLOCK;
    float acc = 0.0f;
    if (i + BLOCK <= n) {
        for (int j = tid % 32; j < BLOCK / 4; j += 32) {
            float4 q = reinterpret_cast<const float4*>(in + i)[j];
            acc += (q.x + q.y) + (q.z + q.w);
        }
    } else {
        for (int j = tid % 32; j < BLOCK; j += 32) {
            if (i + j < n) {
                acc += in[i + j];
            }
        }
    }
    partials[tid] = acc;
    __syncwarp();
    for (int s = 16; s > 0; s >>= 1) {
        if (tid % 32 < s) {
            partials[tid] += partials[tid + s];
        }
        __syncwarp();
    }
    if (tid % 32 == 0 && i < n) {
        out[blockIdx.x * 4 + tid / 32] = partials[tid];
    }
}

void launch_partials(const float* in, float* out, int n, cudaStream_t stream) {
    block_partials<<<(n + BLOCK * 4 - 1) / (BLOCK * 4), BLOCK * 4 / 16, 0, stream>>>(in, out, n);
}

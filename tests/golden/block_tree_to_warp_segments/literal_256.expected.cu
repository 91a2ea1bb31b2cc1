/* klc-spec
kernel: partial_sums
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 256), 8)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The partition as the literal 256 in the shared tree of sequential addressing, an unsigned
// thread index and stride, the element index signed; a dim3 grid and block in the host
// function that launches the kernel.
__global__ void partial_sums(const float* x, float* partial, int n) {
    __shared__ float cache[32 * 8];
    unsigned int t = threadIdx.x;
    int i = (blockIdx.x * 8 + t / 32) * 256;
    float v = 0.0f;
    if (i + 256 <= n) {
        for (int k = t % 32; k < 256 / 4; k += 32) {
            float4 quad = reinterpret_cast<const float4*>(x + i)[k];
            v += (quad.x + quad.y) + (quad.z + quad.w);
        }
    } else {
        for (int k = t % 32; k < 256; k += 32) {
            if (i + k < n) {
                v += x[i + k];
            }
        }
    }
    cache[t] = v;
    __syncwarp();
    for (unsigned int stride = 16; stride > 0; stride >>= 1) {
        if (t % 32 < stride) {
            cache[t] += cache[t + stride];
        }
        __syncwarp();
    }
    if (t % 32 == 0 && i < n) {
        partial[blockIdx.x * 8 + t / 32] = cache[t];
    }
}

void run_partials(const float* x, float* partial, int n) {
    dim3 grid((n + 2047) / 2048);
    dim3 block(256);
    partial_sums<<<grid, block>>>(x, partial, n);
}

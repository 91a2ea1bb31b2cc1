/* klc-spec
kernel: partial_sums
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 256), 4)"]
block: ["ceil_div((256) * 4, 8)"]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The partition as the literal 256, an unsigned thread index, the element index signed, the
// offsets unsigned; a dim3 grid and block in the host function that launches the kernel.
__global__ void partial_sums(const float* x, float* partial, int n) {
    __shared__ float cache[4];
    unsigned int t = threadIdx.x;
    int i = (blockIdx.x * 4 + t / 32) * 256;
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
    for (unsigned int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffff, v, o);
    }
    if (t % 32 == 0) {
        cache[t / 32] = v;
    }
    __syncthreads();
    if (t < 4 && (blockIdx.x * 4 + t) * 256 < n) {
        partial[blockIdx.x * 4 + t] = cache[t];
    }
}

void run_partials(const float* x, float* partial, int n) {
    dim3 grid((n + 1023) / 1024);
    dim3 block(128);
    partial_sums<<<grid, block>>>(x, partial, n);
}

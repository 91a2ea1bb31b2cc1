/* klc-spec
kernel: rmsnorm_rows
template: {T: float}
sizes: {N: 1024, C: 8192}
verify_sizes:
  - {N: 64, C: 4096}
  - {N: 7, C: 999}
  - {N: 3, C: 1}
args:
  - {name: out, shape: [N, C], role: out}
  - {name: inp, shape: [N, C], role: in, init: normal}
  - {name: weight, shape: [C], role: in, init: normal}
  - {name: N, value: N}
  - {name: C, value: C}
grid: [N]
block: [128]
bytes: 8 * N * C + 4 * C
flops: 4 * N * C
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// RMS norm of wide rows, one thread per row, templated; the threads past the last row leave
// at once; `T *x` spelling; a 64-bit row offset.
template <typename T>
__global__ void rmsnorm_rows(T *out, const T *inp, const T *weight, int N, int C) {
    const int row = blockIdx.x;
    if (row < N) {
        const T *x = inp + (size_t)row * C;
        T *o = out + (size_t)row * C;
        float ss = 0.0f;
        {
            decltype(ss) partial = 0;
            for (int i = threadIdx.x; i < C; i += blockDim.x) {
                float v = (float)x[i];
                partial += v * v;
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                partial += __shfl_xor_sync(0xffffffffu, partial, offset);
            }
            __shared__ decltype(ss) partials[32];
            if (threadIdx.x % 32 == 0) {
                partials[threadIdx.x / 32] = partial;
            }
            __syncthreads();
            partial = partials[0];
            for (int warp = 1; warp < blockDim.x / 32; warp++) {
                partial += partials[warp];
            }
            __syncthreads();
            ss += partial;
        }
        float scale = rsqrtf(ss / C + 1e-6f);
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            o[i] = (T)((float)x[i] * scale * (float)weight[i]);
        }
    }
}

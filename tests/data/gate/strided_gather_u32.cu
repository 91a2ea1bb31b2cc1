/* klc-spec
kernel: strided_gather_u32
sizes: {n: 16777216, m: 65521}
args:
  - {name: table, shape: [m], role: in, init: normal}
  - {name: out, shape: [n], role: out}
  - {name: n, value: n}
  - {name: m, value: m}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
*/
// A candidate whose index product is 32-bit: i * 4093 wraps from i = 1049345 on, far past
// the verify sizes and well inside the profiling size; the wrapped index stays in bounds, so
// nothing faults: only the values are wrong.
extern "C" __global__ void strided_gather_u32(const float* __restrict__ table,
                                              float* __restrict__ out, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int j = (unsigned int)i * 4093u % (unsigned int)m;
        out[i] = table[j];
    }
}

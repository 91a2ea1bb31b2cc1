/* klc-spec
kernel: clamp_or_copy
sizes: {n: 1048576}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in}
  - {name: n, value: n}
  - {name: clamp, value: 1}
grid: ["(256) * 16"]
block: [256]
bytes: 8 * n
*/
// A grid-stride loop in each branch, its index a size_t and its stride cast.
__global__ void clamp_or_copy(float* y, const float* x, size_t n, int clamp) {
    if (clamp) {
        {
            size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
            if (i < n) {
                y[i] = fminf(fmaxf(x[i], -1.0f), 1.0f);
            }
        }
    } else {
        {
            size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
            if (i < n) {
                y[i] = x[i];
            }
        }
    }
}

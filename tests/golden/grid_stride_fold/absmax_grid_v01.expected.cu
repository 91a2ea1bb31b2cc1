/* klc-spec
kernel: max_abs_diff
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: a, shape: [n], role: in, init: "normal(0, 2)"}
  - {name: b, shape: [n], role: in, init: "normal(0, 2)"}
  - {name: dist, shape: [1], role: inout, init: "uniform(0, 0.5)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256 * 16)"]
block: [256]
bytes: 8 * n + 8
flops: 2 * n
*/
// dist[0] = max(dist[0], max over i of |a[i] - b[i]|): the L-infinity distance of two
// vectors (a convergence test, the largest error of a result against a reference). The
// expert of the absmax_grid lineage; one optimization, one code shape (README.md names the
// pass that removes it):
//   - many elements per thread: each thread folds the differences blockDim.x * gridDim.x
//     apart into its own maximum with fmaxf (a grid of n / (16 * 256) blocks), so each
//     block's tree and atomicMax are paid once per 16 * 256 elements, not once per 256.
// The block's maxima meet in a shared-memory halving tree; thread 0 publishes the block's
// maximum with one atomicMax on the float's bits, which order as the floats do because every
// value is >= 0. Maxima are exact: every version gives the same result bit for bit.
// bytes: a and b read once, dist read and written. flops: a subtraction and a comparison per
// element.
#define THREADS 256

__global__ void max_abs_diff(const float* a, const float* b, float* dist, int n) {
    __shared__ float smax[THREADS];
    int tid = threadIdx.x;
    float m = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        m = fmaxf(m, fabsf(a[i] - b[i]));
    }
    smax[tid] = m;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (tid < half) {
            smax[tid] = fmaxf(smax[tid], smax[tid + half]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        atomicMax((unsigned int*)dist, __float_as_uint(smax[0]));
    }
}

/* klc-spec
kernel: hist_range
sizes: {n: 1048576}
args:
  - {name: vals, shape: [n], role: in, init: "normal(0, 2)"}
  - {name: bins, shape: [64], role: inout, init: "randint(0, 100)"}
  - {name: n, value: n}
  - {name: lo, value: -3.0}
  - {name: scale, value: 10.0}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Bin computed first (clamped into the edge bins), #define bin count, `T *x` spelling.
#define NUM_BINS 64
__global__ void hist_range(const float *vals, unsigned int *bins, int n, float lo, float scale) {
    __shared__ unsigned int block_counts[64];
    for (int b = threadIdx.x; b < 64; b += blockDim.x) {
        block_counts[b] = 0;
    }
    __syncthreads();
    {
        int idx = threadIdx.x + blockIdx.x * blockDim.x;
        if (idx < n) {
            float v = vals[idx];
            int b = (int)((v - lo) * scale);
            b = min(max(b, 0), NUM_BINS - 1);
            atomicAdd(&block_counts[b], 1u);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 64; b += blockDim.x) {
        unsigned int c = block_counts[b];
        if (c != 0) {
            atomicAdd(&bins[b], c);
        }
    }
}

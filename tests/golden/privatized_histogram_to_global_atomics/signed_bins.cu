/* klc-spec
kernel: weighted_bytes
sizes: {n: 1048576}
args:
  - {name: data, shape: [n], role: in, init: "randint(0, 256)"}
  - {name: w, shape: [n], role: in, init: "randint(0, 4)"}
  - {name: hist, shape: [256], role: inout, init: "randint(0, 1000)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
*/
// Signed global bins: the private copy is unsigned, so the pass refuses (the inverse would
// add unsigned counts to int bins).
#define BINS 256
__global__ void weighted_bytes(const unsigned char* data, const unsigned int* w,
                               int* hist, int n) {
    __shared__ unsigned int local[BINS];
    for (int k = threadIdx.x; k < BINS; k += blockDim.x) {
        local[k] = 0;
    }
    __syncthreads();
    {
        int t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t < n) {
            atomicAdd(&local[data[t]], w[t]);
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < BINS; k += blockDim.x) {
        unsigned int v = local[k];
        if (v != 0) {
            atomicAdd(&hist[k], v);
        }
    }
}

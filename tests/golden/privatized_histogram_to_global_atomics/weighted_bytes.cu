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
// A weighted byte histogram, privatised per block, one element per thread: other names,
// another increment, another block size than the lineage's expert.
#define BINS 256
__global__ void weighted_bytes(const unsigned char* data, const unsigned int* w,
                               unsigned int* hist, int n) {
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

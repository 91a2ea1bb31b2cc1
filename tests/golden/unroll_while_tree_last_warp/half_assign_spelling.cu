/* klc-spec
kernel: sum_abs
sizes: {n: 1000003}
args:
  - {name: v, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: result, shape: [1], role: inout, init: "zeros"}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The while tree in other spellings: `half = half / 2`, `0 != half`, an unbraced if, a
// `T *x` pointer; one float atomicAdd per block (its order between blocks varies, within the
// tolerance, in the original as in the rewrite).
__global__ void sum_abs(const float *v, float *result, int n) {
    __shared__ float cache[512];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    cache[tid] = i < n ? fabsf(v[i]) : 0.0f;
    __syncthreads();
    int half = blockDim.x / 2;
    while (0 != half) {
        if (tid < half) cache[tid] += cache[tid + half];
        __syncthreads();
        half = half / 2;
    }
    if (tid == 0) atomicAdd(result, cache[0]);
}

/* klc-spec
kernel: reduce_blocks
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [512]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused: the block (512 threads) is not the partition of 256 that the index and the tree
// name (its upper half loads the next block's elements, which the tree never adds): not the
// one partial per 256 elements that the rewrite keeps.
__global__ void reduce_blocks(const float* in, float* out, int n) {
    __shared__ float sdata[512];
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int s = 256 / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

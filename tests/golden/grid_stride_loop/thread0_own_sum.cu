/* klc-spec
kernel: thread0_only
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: [1], role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Thread 0 of each block adds its own element only: no combination of the block.
__global__ void thread0_only(const float* __restrict__ x, float* out, int n) {
    float acc = 0.0f;
    {
        int i = blockIdx.x * 256 + threadIdx.x;
        if (i < n) acc += x[i];
    }
    if (threadIdx.x == 0) atomicAdd(out, acc);
}

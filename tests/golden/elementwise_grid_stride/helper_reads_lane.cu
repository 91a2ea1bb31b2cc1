/* klc-spec
kernel: lane_scaled
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: the body calls a helper that reads threadIdx (the lane): in a grid-stride loop
// the lane of an element would be its thread's, not the element's (refused).
__device__ float lane_weight() {
    return 1.0f + (threadIdx.x % 32) * 0.01f;
}

__global__ void lane_scaled(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * lane_weight();
    }
}

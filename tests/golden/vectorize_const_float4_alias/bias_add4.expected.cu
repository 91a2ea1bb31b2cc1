/* klc-spec
kernel: bias_add4
sizes: {n4: 262144}
args:
  - {name: y, shape: [4 * n4], role: out}
  - {name: x, shape: [4 * n4], role: in}
  - {name: b, value: 0.5}
  - {name: n4, value: n4}
grid: ["ceil_div(n4, 256)"]
block: [256]
bytes: 32 * n4
*/
// Four floats a thread, read one by one beside a const float4 alias nothing reads yet.
__global__ void bias_add4(float* y, const float* x, float b, int n4) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 v = x4[i];
        y[4 * i + 0] = v.x + b;
        y[4 * i + 1] = v.y + b;
        y[4 * i + 2] = v.z + b;
        y[4 * i + 3] = v.w + b;
    }
}

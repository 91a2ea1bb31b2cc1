/* klc-spec
kernel: relu4_in_place
sizes: {n4: 262144}
args:
  - {name: x, shape: [4 * n4], role: inout}
  - {name: n4, value: n4}
grid: ["ceil_div(n4, 256)"]
block: [256]
bytes: 32 * n4
*/
// Four floats a thread, loaded and stored one by one beside a float4 alias.
__global__ void relu4_in_place(float* x, int n4) {
    float4* x4 = reinterpret_cast<float4*>(x);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = x4[i];
        v.x = fmaxf(v.x, 0.0f);
        v.y = fmaxf(v.y, 0.0f);
        v.z = fmaxf(v.z, 0.0f);
        v.w = fmaxf(v.w, 0.0f);
        x4[i] = v;
    }
}

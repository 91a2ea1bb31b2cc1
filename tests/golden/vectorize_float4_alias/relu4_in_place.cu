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
        float4 v = make_float4(x[4 * (i) + 0], x[4 * (i) + 1], x[4 * (i) + 2], x[4 * (i) + 3]);
        v.x = fmaxf(v.x, 0.0f);
        v.y = fmaxf(v.y, 0.0f);
        v.z = fmaxf(v.z, 0.0f);
        v.w = fmaxf(v.w, 0.0f);
        {
            const float4 klc_v = v;
            x[4 * (i) + 0] = klc_v.x;
            x[4 * (i) + 1] = klc_v.y;
            x[4 * (i) + 2] = klc_v.z;
            x[4 * (i) + 3] = klc_v.w;
        }
    }
}

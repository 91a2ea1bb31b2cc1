/* klc-spec
kernel: dot4_rows
sizes: {rows: 4096, k4: 256}
args:
  - {name: out, shape: [rows], role: out}
  - {name: w, shape: [rows, 4 * k4], role: in}
  - {name: v, shape: [4 * k4], role: in}
  - {name: k4, value: k4}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 16 * rows * k4
*/
// A row of weights dotted with a vector, four weights at a time loaded one by one.
__global__ void dot4_rows(float* out, const float* w, const float* v, int k4) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < k4; ++k) {
        const float* p = w + (r * k4 + k) * 4;
        const float4 a = make_float4(p[0], p[1], p[2], p[3]);
        s += a.x * v[4 * k] + a.y * v[4 * k + 1] + a.z * v[4 * k + 2] + a.w * v[4 * k + 3];
    }
    out[r] = s;
}

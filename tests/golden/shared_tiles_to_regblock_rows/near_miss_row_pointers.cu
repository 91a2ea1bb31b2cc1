/* klc-spec
kernel: linear_2d
sizes: {BT: 4096, C: 768, OC: 3072}
verify_sizes:
  - {BT: 37, C: 29, OC: 51}
args:
  - {name: out, shape: [BT, OC], role: out}
  - {name: inp, shape: [BT, C], role: in, init: normal}
  - {name: weight, shape: [OC, C], role: in, init: normal}
  - {name: bias, shape: [OC], role: in, init: normal}
  - {name: BT, value: BT}
  - {name: C, value: C}
  - {name: OC, value: OC}
grid: ["ceil_div(OC, 32)", "ceil_div(BT, 32)"]
block: [32, 32]
bytes: 4 * BT * C + 4 * OC * C + 4 * OC + 4 * BT * OC
flops: 2 * BT * C * OC
*/
// shared_tiles_to_regblock_rows refusal: A is read through a row pointer declared from the row
// before the product: declaring the row again would not move the pointer.
// A linear layer on a 2-D grid: the weight stored (OC, C), so B is read transposed
// (a row of the weight per output column); row pointers declared between the indices and
// the bounds check; a double accumulator; the bias added after the loop; 64-bit offsets;
// `T *x` spelling; a 32 x 32 block.
__global__ void linear_2d(float *out, const float *inp, const float *weight,
                          const float *bias, int BT, int C, int OC) {
    int bt = blockIdx.y * blockDim.y + threadIdx.y;
    int oc = blockIdx.x * blockDim.x + threadIdx.x;
    const float *x = inp + (size_t)bt * C;
    const float *w = weight + (size_t)oc * C;
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    double acc = 0.0;
    for (int k0 = 0; k0 < C; k0 += 32) {
        {
            const int c = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (bt < BT && c < C) ? x[c] : 0.0f;
        }
        {
            const int c = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (c < C && oc < OC) ? w[c] : 0.0f;
        }
        __syncthreads();
        for (int c = 0; c < 32; c++) {
            acc += As[threadIdx.y][c] * Bs[c][threadIdx.x];
        }
        __syncthreads();
    }
    if (bt < BT && oc < OC) {
        out[(size_t)bt * OC + oc] = (float)acc + bias[oc];
    }
}

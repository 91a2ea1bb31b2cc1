/* klc-spec
kernel: MatrixMulKernel
sizes: {Width: 1024}
args:
  - {name: M, shape: [Width, Width], role: in, init: normal}
  - {name: N, shape: [Width, Width], role: in, init: normal}
  - {name: P, shape: [Width, Width], role: out}
  - {name: Width, value: Width}
grid: ["ceil_div(Width, 16)", "ceil_div(Width, 16)"]
block: [16, 16]
bytes: 12 * Width * Width
flops: 2 * Width * Width * Width
*/
// shared_tiles_to_regblock_rows case: naive_matmul_to_shared_tiles's output on a square product
// with capitalised names (a real spelling): register-blocked, block.y /= 4.
// Square matrices (one size for every bound), each comparison of the bounds check in
// parentheses, a 2-space indent, capitalised names, an int literal as the initial sum.
__global__ void MatrixMulKernel(float* M, float* N, float* P, int Width) {
  int Row = blockIdx.y*blockDim.y+threadIdx.y;
  int Col = blockIdx.x*blockDim.x+threadIdx.x;
  __shared__ float As[16][16];
  __shared__ float Bs[16][16];
  float Pvalue = 0;
  for (int k0 = 0; k0 < Width; k0 += 16) {
      {
          const int k = k0 + threadIdx.x;
          As[threadIdx.y][threadIdx.x] = (Row < Width && k < Width) ? M[Row*Width+k] : 0.0f;
      }
      {
          const int k = k0 + threadIdx.y;
          Bs[threadIdx.y][threadIdx.x] = (k < Width && Col < Width) ? N[k*Width+Col] : 0.0f;
      }
      __syncthreads();
      for (int k = 0; k < 16; k++) {
          Pvalue += As[threadIdx.y][k] * Bs[k][threadIdx.x];
      }
      __syncthreads();
  }
  if (Row < Width && Col < Width) {
      P[Row*Width+Col] = Pvalue;
  }
}

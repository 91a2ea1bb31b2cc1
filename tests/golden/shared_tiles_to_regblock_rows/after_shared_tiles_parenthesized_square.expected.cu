/* klc-spec
kernel: MatrixMulKernel
sizes: {Width: 1024}
args:
  - {name: M, shape: [Width, Width], role: in, init: normal}
  - {name: N, shape: [Width, Width], role: in, init: normal}
  - {name: P, shape: [Width, Width], role: out}
  - {name: Width, value: Width}
grid: ["ceil_div(Width, 16)", "ceil_div(Width, 16)"]
block: [16, "ceil_div(16, 4)"]
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
  float acc[4];
  for (int i = 0; i < 4; i++) {
      acc[i] = 0;
  }
  for (int k0 = 0; k0 < Width; k0 += 16) {
      for (int i = 0; i < 4; i++) {
          const int r = Row + i * gridDim.y * blockDim.y;
          {
              const int Row = r;
              const int k = k0 + threadIdx.x;
              As[threadIdx.y + i * blockDim.y][threadIdx.x] = (Row < Width && k < Width) ? M[Row*Width+k] : 0.0f;
          }
      }
      for (int i = 0; i < 4; i++) {
          const int k = k0 + threadIdx.y + i * blockDim.y;
          Bs[threadIdx.y + i * blockDim.y][threadIdx.x] = (k < Width && Col < Width) ? N[k*Width+Col] : 0.0f;
      }
      __syncthreads();
      for (int k = 0; k < 16; k++) {
          const float b = Bs[k][threadIdx.x];
          for (int i = 0; i < 4; i++) {
              acc[i] += As[threadIdx.y + i * blockDim.y][k] * b;
          }
      }
      __syncthreads();
  }
  for (int i = 0; i < 4; i++) {
      const int r = Row + i * gridDim.y * blockDim.y;
      {
          const int Row = r;
          if (Row < Width && Col < Width) {
              float Pvalue = acc[i];
              P[Row*Width+Col] = Pvalue;
          }
      }
  }
}

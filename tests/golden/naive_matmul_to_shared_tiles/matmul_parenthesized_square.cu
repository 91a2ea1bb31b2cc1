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
// Square matrices (one size for every bound), each comparison of the bounds check in
// parentheses, a 2-space indent, capitalised names, an int literal as the initial sum.
__global__ void MatrixMulKernel(float* M, float* N, float* P, int Width) {
  int Row = blockIdx.y*blockDim.y+threadIdx.y;
  int Col = blockIdx.x*blockDim.x+threadIdx.x;
  if ((Row < Width) && (Col < Width)) {
    float Pvalue = 0;
    for (int k = 0; k < Width; ++k) {
      Pvalue += M[Row*Width+k]*N[k*Width+Col];
    }
    P[Row*Width+Col] = Pvalue;
  }
}

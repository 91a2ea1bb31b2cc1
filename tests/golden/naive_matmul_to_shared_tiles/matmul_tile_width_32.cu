// A 32 x 32 block (TILE_WIDTH from a #define, dim3 variables in the host function): the tile
// is the site's own block, 32, not the 16 of the lineages the skill was learned from.
#define TILE_WIDTH 32
__global__ void matMulKernel(const float *M_d, const float *N_d, float *P_d, int m, int n, int k) {
    int Row = blockIdx.y * TILE_WIDTH + threadIdx.y;
    int Col = blockIdx.x * TILE_WIDTH + threadIdx.x;
    if (Row < m && Col < n) {
        float Pvalue = 0;
        for (int i = 0; i < k; ++i) {
            Pvalue += M_d[Row * k + i] * N_d[i * n + Col];
        }
        P_d[Row * n + Col] = Pvalue;
    }
}
void matMul(const float *M_d, const float *N_d, float *P_d, int m, int n, int k) {
    dim3 dimGrid((n - 1) / TILE_WIDTH + 1, (m - 1) / TILE_WIDTH + 1, 1);
    dim3 dimBlock(TILE_WIDTH, TILE_WIDTH, 1);
    matMulKernel<<<dimGrid, dimBlock>>>(M_d, N_d, P_d, m, n, k);
}

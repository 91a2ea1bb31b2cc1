#include <cuda_runtime.h>

template <typename IndexType, typename ValueType>
__global__ void spmv_csr_scalar_kernel(const IndexType num_rows,
                                       const IndexType *__restrict__ Ap,
                                       const IndexType *__restrict__ Aj,
                                       const ValueType *__restrict__ Ax,
                                       const ValueType *__restrict__ x,
                                       ValueType *__restrict__ y)
{
    const IndexType thread_id = blockDim.x * blockIdx.x + threadIdx.x;
    const IndexType grid_size = gridDim.x * blockDim.x;
    for (IndexType row = thread_id; row < num_rows; row += grid_size) {
        const IndexType row_start = Ap[row];
        const IndexType row_end = Ap[row + 1];
        ValueType sum = 0;
        for (IndexType jj = row_start; jj < row_end; jj++)
            sum += Ax[jj] * x[Aj[jj]];
        y[row] = sum;
    }
}

template <typename IndexType, typename ValueType, unsigned int VECTORS_PER_BLOCK, unsigned int THREADS_PER_VECTOR>
__launch_bounds__(VECTORS_PER_BLOCK * THREADS_PER_VECTOR, 1)
__global__ void spmv_csr_vector_kernel(const IndexType num_rows, const IndexType *Ap, const IndexType *Aj,
                                       const ValueType *Ax, const ValueType *x, ValueType *y)
{
    __shared__ volatile ValueType sdata[VECTORS_PER_BLOCK * THREADS_PER_VECTOR + THREADS_PER_VECTOR / 2];
    __shared__ volatile IndexType ptrs[VECTORS_PER_BLOCK][2];

    const IndexType THREADS_PER_BLOCK = VECTORS_PER_BLOCK * THREADS_PER_VECTOR;
    const IndexType thread_id = THREADS_PER_BLOCK * blockIdx.x + threadIdx.x;
    const IndexType thread_lane = threadIdx.x & (THREADS_PER_VECTOR - 1);
    const IndexType vector_id = thread_id / THREADS_PER_VECTOR;
    const IndexType vector_lane = threadIdx.x / THREADS_PER_VECTOR;
    const IndexType num_vectors = VECTORS_PER_BLOCK * gridDim.x;

    for (IndexType row = vector_id; row < num_rows; row += num_vectors) {
        if (thread_lane < 2)
            ptrs[vector_lane][thread_lane] = Ap[row + thread_lane];
        const IndexType row_start = ptrs[vector_lane][0];
        const IndexType row_end = ptrs[vector_lane][1];
        ValueType sum = 0;
        for (IndexType jj = row_start + thread_lane; jj < row_end; jj += THREADS_PER_VECTOR)
            sum += Ax[jj] * x[Aj[jj]];
        sdata[threadIdx.x] = sum;
        if (THREADS_PER_VECTOR > 16) sdata[threadIdx.x] = sum = sum + sdata[threadIdx.x + 16];
        if (THREADS_PER_VECTOR >  8) sdata[threadIdx.x] = sum = sum + sdata[threadIdx.x +  8];
        if (THREADS_PER_VECTOR >  4) sdata[threadIdx.x] = sum = sum + sdata[threadIdx.x +  4];
        if (THREADS_PER_VECTOR >  2) sdata[threadIdx.x] = sum = sum + sdata[threadIdx.x +  2];
        if (THREADS_PER_VECTOR >  1) sdata[threadIdx.x] = sum = sum + sdata[threadIdx.x +  1];
        if (thread_lane == 0)
            y[row] = sdata[threadIdx.x];
    }
}

__global__ void spmv_ell(int rows, int max_nnz, const int *__restrict__ cols, const float *__restrict__ vals,
                         const float *__restrict__ x, float *__restrict__ y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float dot = 0.f;
    for (int k = 0; k < max_nnz; ++k) {
        int c = cols[k * rows + r];
        if (c >= 0) dot += vals[k * rows + r] * __ldg(&x[c]);
    }
    y[r] = dot;
}

void spmv(int rows, const int *Ap, const int *Aj, const float *Ax, const float *x, float *y)
{
    spmv_csr_scalar_kernel<int, float><<<(rows + 255) / 256, 256>>>(rows, Ap, Aj, Ax, x, y);
    spmv_csr_vector_kernel<int, float, 8, 32><<<(rows + 7) / 8, 256>>>(rows, Ap, Aj, Ax, x, y);
}

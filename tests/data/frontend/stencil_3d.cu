// 7-point and 25-point stencils with register queues (klc corpus).
#include <cuda_runtime.h>

#define RADIUS 4
#define BDIMX 32
#define BDIMY 16

__constant__ float c_coeff[RADIUS + 1];

__global__ void stencil7(const float *__restrict__ in, float *__restrict__ out, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < 1 || j < 1 || i >= nx - 1 || j >= ny - 1) return;
    const int sx = 1, sy = nx, sz = nx * ny;
    for (int k = 1; k < nz - 1; k++) {
        int c = i * sx + j * sy + k * sz;
        out[c] = -6.f * in[c] + in[c - sx] + in[c + sx] + in[c - sy] + in[c + sy] + in[c - sz] + in[c + sz];
    }
}

__global__ void __launch_bounds__(BDIMX * BDIMY)
fd_25pt(const float *__restrict__ g_in, float *__restrict__ g_out, const int dimx, const int dimy, const int dimz)
{
    __shared__ float s_data[BDIMY + 2 * RADIUS][BDIMX + 2 * RADIUS];

    const int ix = blockIdx.x * blockDim.x + threadIdx.x;
    const int iy = blockIdx.y * blockDim.y + threadIdx.y;
    int in_idx = iy * dimx + ix;
    int out_idx = 0;
    const int stride = dimx * dimy;

    float infront[RADIUS];
    float behind[RADIUS];
    float current;

    const int tx = threadIdx.x + RADIUS;
    const int ty = threadIdx.y + RADIUS;

#pragma unroll
    for (int i = RADIUS - 2; i >= 0; i--) {
        behind[i] = g_in[in_idx];
        in_idx += stride;
    }
    current = g_in[in_idx];
    out_idx = in_idx;
    in_idx += stride;
#pragma unroll
    for (int i = 0; i < RADIUS; i++) {
        infront[i] = g_in[in_idx];
        in_idx += stride;
    }

#pragma unroll 9
    for (int iz = 0; iz < dimz; iz++) {
#pragma unroll
        for (int i = RADIUS - 1; i > 0; i--) behind[i] = behind[i - 1];
        behind[0] = current;
        current = infront[0];
#pragma unroll
        for (int i = 0; i < RADIUS - 1; i++) infront[i] = infront[i + 1];
        infront[RADIUS - 1] = g_in[in_idx];

        in_idx += stride;
        out_idx += stride;
        __syncthreads();

        if (threadIdx.y < RADIUS) {
            s_data[threadIdx.y][tx] = g_in[out_idx - RADIUS * dimx];
            s_data[threadIdx.y + BDIMY + RADIUS][tx] = g_in[out_idx + BDIMY * dimx];
        }
        if (threadIdx.x < RADIUS) {
            s_data[ty][threadIdx.x] = g_in[out_idx - RADIUS];
            s_data[ty][threadIdx.x + BDIMX + RADIUS] = g_in[out_idx + BDIMX];
        }
        s_data[ty][tx] = current;
        __syncthreads();

        float value = c_coeff[0] * current;
#pragma unroll
        for (int i = 1; i <= RADIUS; i++) {
            value += c_coeff[i] * (infront[i - 1] + behind[i - 1] + s_data[ty - i][tx] + s_data[ty + i][tx] + s_data[ty][tx - i] + s_data[ty][tx + i]);
        }
        g_out[out_idx] = value;
    }
    (void)iy;
}

__global__ void jacobi2d(const double *a, double *b, int n, int iters)
{
    int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int it = 0;
    do {
        if (i < n - 1 && j < n - 1)
            b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
        ++it;
    } while (it < iters);
}

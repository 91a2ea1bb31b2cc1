/* klc-spec
kernel: jacobi_7pt
sizes: {nx: 512, ny: 512, nz: 128}
verify_sizes:
  - {nx: 64, ny: 16, nz: 8}
  - {nx: 37, ny: 9, nz: 5}
  - {nx: 3, ny: 1, nz: 2}
args:
  - {name: u, shape: [nz, ny, nx], role: in, init: normal}
  - {name: f, shape: [nz, ny, nx], role: in, init: normal}
  - {name: u_new, shape: [nz, ny, nx], role: out}
  - {name: nx, value: nx}
  - {name: ny, value: ny}
  - {name: nz, value: nz}
  - {name: h2, value: 0.01}
grid: ["ceil_div(nx, 32)", "ceil_div(ny, 4)", nz]
block: [32, 4, 1]
bytes: 12 * nx * ny * nz
flops: 8 * nx * ny * nz
*/
// family: stencil
// style: 3D grid with blockIdx.z as the plane, size_t strides, boundary copied, an IDX macro
// One Jacobi sweep of the 3D Poisson equation (7-point Laplacian) on an nz x ny x nx grid:
//   u_new = (sum of the 6 neighbours of u - h2 * f) / 6 at interior points,
//   u_new = u on the boundary.
// bytes: u and f read once, u_new written. flops: 6 adds, a multiply, a divide per point.
#define IDX(i, j, k) ((size_t)(k) * ny * nx + (size_t)(j) * nx + (i))

__global__ void jacobi_7pt(const float* u, const float* f, float* u_new, int nx, int ny, int nz,
                           float h2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z;
    if (i >= nx || j >= ny || k >= nz) return;
    if (i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1) {
        u_new[IDX(i, j, k)] = u[IDX(i, j, k)];
        return;
    }
    float s = u[IDX(i - 1, j, k)] + u[IDX(i + 1, j, k)] + u[IDX(i, j - 1, k)] +
              u[IDX(i, j + 1, k)] + u[IDX(i, j, k - 1)] + u[IDX(i, j, k + 1)];
    u_new[IDX(i, j, k)] = (s - h2 * f[IDX(i, j, k)]) / 6.0f;
}

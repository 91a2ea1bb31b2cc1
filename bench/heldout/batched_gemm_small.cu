/* klc-spec
kernel: batched_gemm_small
sizes: {batch: 8192, dim: 64}
verify_sizes:
  - {batch: 16, dim: 64}
  - {batch: 9, dim: 32}
  - {batch: 3, dim: 33}
args:
  - {name: A, shape: [batch, dim, dim], role: in, init: "uniform(-1, 1)"}
  - {name: B, shape: [batch, dim, dim], role: in, init: "uniform(-1, 1)"}
  - {name: C, shape: [batch, dim, dim], role: out}
  - {name: batch, value: batch}
  - {name: dim, value: dim}
grid: ["ceil_div(batch * dim * dim, 256)"]
block: [256]
bytes: 12 * batch * dim * dim
flops: 2 * batch * dim * dim * dim
tolerance: {rtol: 0.0001, atol: 0.00001}
*/
// A batch of small square GEMMs: C[b] = A[b] @ B[b], each dim x dim row-major (64 x 64 for
// profiling). One thread per output element over the flattened batch: thread (b, i, j) reads
// row i of A[b] and column j of B[b] straight from global memory; no tiling.
// bytes: A and B read once, C written once (12 * batch * dim^2).
// flops: a multiply and an add per term of every dot product (2 * batch * dim^3).
// The tolerance is relative to the size of the results, so a reordered dot product passes.
__global__ void batched_gemm_small(const float* A, const float* B, float* C, int batch,
                                   int dim) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < batch * dim * dim) {
        int b = idx / (dim * dim);
        int i = (idx / dim) % dim;
        int j = idx % dim;
        const float* a = A + b * dim * dim;
        const float* bm = B + b * dim * dim;
        float sum = 0.0f;
        for (int k = 0; k < dim; k++) {
            sum += a[i * dim + k] * bm[k * dim + j];
        }
        C[idx] = sum;
    }
}

// A first version of a causal-free row softmax over (head, query) rows: one thread per
// row, the row count a const local declared between the index and its check, the launch
// in the host function below.
#include <cuda_runtime.h>

__global__ void softmax_rows_naive(float* probs, const float* scores, int n_heads,
                                   int n_queries, int n_keys) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    const int total = n_heads * n_queries;
    if (q < total) {
        const float* s = scores + (size_t)q * n_keys;
        float* p = probs + (size_t)q * n_keys;
        float hi = -1e30f;
        for (int k = 0; k < n_keys; k++) {
            hi = fmaxf(hi, s[k]);
        }
        float z = 0.0f;
        for (int k = 0; k < n_keys; k++) {
            z += expf(s[k] - hi);
        }
        for (int k = 0; k < n_keys; k++) {
            p[k] = expf(s[k] - hi) / z;
        }
    }
}

void softmax_rows(float* probs, const float* scores, int n_heads, int n_queries, int n_keys) {
    int blocks = (n_heads * n_queries + 127) / 128;
    softmax_rows_naive<<<blocks, 128>>>(probs, scores, n_heads, n_queries, n_keys);
}

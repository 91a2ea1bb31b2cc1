/* klc-spec
kernel: adam_update
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: param, shape: [n], role: inout, init: normal}
  - {name: grad, shape: [n], role: in, init: "normal(0, 0.1)"}
  - {name: m, shape: [n], role: inout, init: "normal(0, 0.01)"}
  - {name: v, shape: [n], role: inout, init: "uniform(0.0001, 0.001)"}
  - {name: lr, value: 0.001}
  - {name: beta1, value: 0.9}
  - {name: beta2, value: 0.999}
  - {name: eps, value: 1.0e-8}
  - {name: step, value: 10}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 28 * n
flops: 14 * n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// One Adam step (step number `step`, counted from 1) over n parameters:
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   param -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + eps)
// One element per thread; every thread computes the two bias corrections itself.
// bytes: param, m, v read and written (24n), grad read (4n).
// flops: m update (3), v update (4), the two bias-corrected quotients (2), sqrt and + eps
// (2), lr * m_hat and the division (2), the subtraction (1): 14 per element. The bias
// corrections (powf) are per launch, not per element, and are not counted.
__global__ void adam_update(float* param, const float* grad, float* m, float* v, float lr,
                            float beta1, float beta2, float eps, int step, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float g = grad[i];
        float mi = beta1 * m[i] + (1.0f - beta1) * g;
        float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        float m_hat = mi / (1.0f - powf(beta1, (float)step));
        float v_hat = vi / (1.0f - powf(beta2, (float)step));
        param[i] = param[i] - lr * m_hat / (sqrtf(v_hat) + eps);
    }
}

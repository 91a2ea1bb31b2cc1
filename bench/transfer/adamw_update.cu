/* klc-spec
kernel: adamw_update
sizes: {n: 33554432}
args:
  - {name: params, shape: [n], role: inout, init: normal}
  - {name: grads, shape: [n], role: in, init: "normal(0, 0.1)"}
  - {name: m, shape: [n], role: inout, init: "normal(0, 0.01)"}
  - {name: v, shape: [n], role: inout, init: "uniform(0, 0.001)"}
  - {name: num_parameters, value: n}
  - {name: lr, value: 0.001}
  - {name: beta1, value: 0.9}
  - {name: beta2, value: 0.999}
  - {name: eps, value: 0.00000001}
  - {name: weight_decay, value: 0.01}
  - {name: step, value: 10}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n + 3 * 2 * 4 * n
flops: 16 * n
*/
// family: elementwise
// style: optimizer update, long size, early return, bias corrections computed per thread
// AdamW step t = step (1-based): m and v are the moment estimates, updated in place, then
//   params -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * params).
// bytes: grads read (4n), params, m and v read and written (24n). flops: about 16 per
// parameter (powf and sqrtf not counted).
__global__ void adamw_update(float* params, const float* grads, float* m, float* v,
                             long num_parameters, float lr, float beta1, float beta2,
                             float eps, float weight_decay, int step) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= num_parameters) return;
    float g = grads[i];
    float bc1 = 1.0f - powf(beta1, (float)step);
    float bc2 = 1.0f - powf(beta2, (float)step);
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float m_hat = mi / bc1;
    float v_hat = vi / bc2;
    float p = params[i];
    params[i] = p - lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * p);
}

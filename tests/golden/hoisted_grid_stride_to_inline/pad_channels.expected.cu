// Pad the channels of an NHWC tensor with zeros, the grid stride hoisted into a local.
__global__ void pad_channels(const float* in, float* out, int pixels, int c_in, int c_out) {
    const int jump = blockDim.x * gridDim.x;
    const int total = pixels * c_out;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += blockDim.x * gridDim.x) {
        const int c = idx % c_out;
        out[idx] = c < c_in ? in[(idx / c_out) * c_in + c] : 0.0f;
    }
}

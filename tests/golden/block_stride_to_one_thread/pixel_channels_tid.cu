/* klc-spec
kernel: pixel_channel_mean
sizes: {pixels: 4096, taps: 9, channels: 256}
verify_sizes:
  - {pixels: 5, taps: 3, channels: 70}
args:
  - {name: out, shape: [pixels, channels], role: out}
  - {name: in, shape: [pixels, taps, channels], role: in}
  - {name: taps, value: taps}
  - {name: channels, value: channels}
grid: [pixels]
block: [128]
bytes: 4 * pixels * taps * channels + 4 * pixels * channels
*/
// The mean over taps of each pixel's channels: a block per pixel, its threads striding the
// channels from a copy of threadIdx.x, with a 64-bit channel index.
__global__ void pixel_channel_mean(float* out, const float* in, int taps, int channels) {
    const int tid = threadIdx.x;
    const long long pixel = blockIdx.x;
    const float* base = in + pixel * taps * channels;
    const float inv = 1.0f / taps;
    for (long long ch = tid; ch < channels; ch += blockDim.x) {
        float acc = 0.0f;
        for (int t = 0; t < taps; ++t) {
            acc += base[t * channels + ch];
        }
        out[pixel * channels + ch] = acc * inv;
    }
}

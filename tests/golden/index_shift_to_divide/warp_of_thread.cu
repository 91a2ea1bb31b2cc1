// Warp and lane of a thread, with shifts and masks.
#define WARP_BITS 5

__global__ void warp_ids(int* warp, int* lane) {
    int id = threadIdx.x;
    warp[blockIdx.x * blockDim.x + id] = id >> WARP_BITS;
    lane[blockIdx.x * blockDim.x + id] = threadIdx.x & 0x1f;
}

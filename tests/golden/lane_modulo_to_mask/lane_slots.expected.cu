// Each thread writes its lane and its warp.
__global__ void lane_slots(int* lanes, int* warps, int n) {
    const int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    if (i < n) {
        lanes[i] = tid & 0x1f;
        warps[i] = tid / 32;
    }
}

/* klc/nvrtc_include/klc_warp_legacy.h: the warp intrinsics without a mask (__shfl,
 * __shfl_up, __shfl_down, __shfl_xor, __any, __all, __ballot), which CUDA 9 deprecated and
 * which CUDA's headers declare only for targets below compute capability 7.0. Code written
 * for those targets calls them on converged warps; on 7.0 and above the gate compiles each
 * as its _sync form over the full warp (the replacement CUDA's programming guide gives for a
 * converged warp), so that such a file compiles for the GPU it is measured on. The gate
 * pre-includes this header only in a file that calls one of them (klc.gate.compile). */
#ifndef KLC_NVRTC_WARP_LEGACY_H
#define KLC_NVRTC_WARP_LEGACY_H
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
#define KLC_FULL_WARP_MASK 0xffffffffu
template <class T>
__device__ __forceinline__ T __shfl(T var, int src_lane, int width = 32) {
    return __shfl_sync(KLC_FULL_WARP_MASK, var, src_lane, width);
}
template <class T>
__device__ __forceinline__ T __shfl_up(T var, unsigned int delta, int width = 32) {
    return __shfl_up_sync(KLC_FULL_WARP_MASK, var, delta, width);
}
template <class T>
__device__ __forceinline__ T __shfl_down(T var, unsigned int delta, int width = 32) {
    return __shfl_down_sync(KLC_FULL_WARP_MASK, var, delta, width);
}
template <class T>
__device__ __forceinline__ T __shfl_xor(T var, int lane_mask, int width = 32) {
    return __shfl_xor_sync(KLC_FULL_WARP_MASK, var, lane_mask, width);
}
__device__ __forceinline__ int __any(int predicate) {
    return __any_sync(KLC_FULL_WARP_MASK, predicate);
}
__device__ __forceinline__ int __all(int predicate) {
    return __all_sync(KLC_FULL_WARP_MASK, predicate);
}
__device__ __forceinline__ unsigned int __ballot(int predicate) {
    return __ballot_sync(KLC_FULL_WARP_MASK, predicate);
}
#endif
#endif

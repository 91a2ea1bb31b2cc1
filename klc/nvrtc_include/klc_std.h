/* klc/nvrtc_include/klc_std.h: shared by klc's standard-header shims for NVRTC.
 *
 * NVRTC compiles device code with no standard library on its include path: <cmath>,
 * <cstdint>, <limits>, ... are not found, while nvcc (with the host's library beside CUDA's)
 * gives device code std::sqrt, int64_t, FLT_MAX, std::numeric_limits and M_PI. Each shim in
 * this folder (but <cmath> and <math.h>: klc_math.h) includes the libcu++ header of the same
 * name (<cuda/std/...>, from the nvidia-cuda-cccl wheel) and makes its names visible as
 * std:: names. The folder comes last
 * on the gate's include path, so a header of the kernel's own folder wins. */
#ifndef KLC_NVRTC_STD_H
#define KLC_NVRTC_STD_H
namespace cuda { namespace std {} }
namespace std { using namespace ::cuda::std; }
#endif

/* klc/nvrtc_include/klc_cub.cuh: what <cub/cub.cuh> gives device code, for NVRTC.
 *
 * CUB's umbrella header refuses NVRTC (an #error: its device-wide algorithms are host code)
 * and asks for the device headers instead. A kernel file that includes the umbrella uses
 * its block, warp and thread primitives in device code (cub::BlockReduce, cub::WarpReduce,
 * ...): the gate compiles its `#include <cub/cub.cuh>` as an include of this header, which
 * includes those device headers (klc.gate.compile.prepare_device_source). It also names the
 * operators CCCL 3 removed (cub::Sum, cub::Max, ...) after the functional objects that
 * replace them, so that a file written for CUB 2 compiles as it did. */
#ifndef KLC_NVRTC_CUB_CUH
#define KLC_NVRTC_CUB_CUH
#include <cub/config.cuh>
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_shuffle.cuh>
#include <cub/block/block_store.cuh>
#include <cub/thread/thread_load.cuh>
#include <cub/thread/thread_operators.cuh>
#include <cub/thread/thread_reduce.cuh>
#include <cub/thread/thread_scan.cuh>
#include <cub/thread/thread_store.cuh>
#include <cub/warp/warp_exchange.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cub/warp/warp_store.cuh>
#include <cub/util_ptx.cuh>
#include <cub/util_type.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#if CCCL_MAJOR_VERSION >= 3
CUB_NAMESPACE_BEGIN
using Equality = ::cuda::std::equal_to<>;
using Inequality = ::cuda::std::not_equal_to<>;
using Sum = ::cuda::std::plus<>;
using Difference = ::cuda::std::minus<>;
using Division = ::cuda::std::divides<>;
using Max = ::cuda::maximum<>;
using Min = ::cuda::minimum<>;
CUB_NAMESPACE_END
#endif
#endif

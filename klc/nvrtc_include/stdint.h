/* klc's <stdint.h> for NVRTC: libcu++'s <cuda/std/cstdint> as std:: (see klc_std.h). */
#pragma once
#include <cuda/std/cstdint>
#include "klc_std.h"

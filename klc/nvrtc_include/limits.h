/* klc's <limits.h> for NVRTC: libcu++'s <cuda/std/climits> as std:: (see klc_std.h). */
#pragma once
#include <cuda/std/climits>
#include "klc_std.h"

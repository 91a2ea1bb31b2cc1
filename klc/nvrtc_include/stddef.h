/* klc's <stddef.h> for NVRTC: libcu++'s <cuda/std/cstddef> as std:: (see klc_std.h). */
#pragma once
#include <cuda/std/cstddef>
#include "klc_std.h"

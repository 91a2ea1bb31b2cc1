/* klc's <float.h> for NVRTC: libcu++'s <cuda/std/cfloat> as std:: (see klc_std.h). */
#pragma once
#include <cuda/std/cfloat>
#include "klc_std.h"

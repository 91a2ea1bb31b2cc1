/* klc's <math.h> for NVRTC: see klc_std.h and klc_math.h. */
#pragma once
#include "klc_math.h"

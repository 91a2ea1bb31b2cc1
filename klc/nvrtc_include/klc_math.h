/* klc/nvrtc_include/klc_math.h: what <math.h> and <cmath> give device code under nvcc, for
 * NVRTC, which has CUDA's device math functions built in (sqrtf, sqrt(float), expf, isnan,
 * min, max, ...) but no <math.h>: the host library's constants (M_PI, ...), INFINITY, NAN
 * and HUGE_VAL*, and the built-in functions under their std:: names. The gate pre-includes
 * it in every compile, as nvcc's implicit cuda_runtime.h brings <math.h> into every file.
 * Written for klc, with no libcu++ include, so that it costs nothing (libcu++'s
 * <cuda/std/cmath> costs seconds of NVRTC time). */
#ifndef KLC_NVRTC_MATH_H
#define KLC_NVRTC_MATH_H

#ifndef INFINITY
#define INFINITY (__builtin_bit_cast(float, 0x7f800000u))
#endif
#ifndef NAN
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
#endif
#ifndef HUGE_VALF
#define HUGE_VALF (__builtin_bit_cast(float, 0x7f800000u))
#endif
#ifndef HUGE_VAL
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ull))
#endif
#ifndef M_PI
#define M_E 2.718281828459045235360287471352662498
#define M_LOG2E 1.442695040888963407359924681001892137
#define M_LOG10E 0.434294481903251827651128918916605082
#define M_LN2 0.693147180559945309417232121458176568
#define M_LN10 2.302585092994045684017991454684364208
#define M_PI 3.141592653589793238462643383279502884
#define M_PI_2 1.570796326794896619231321691639751442
#define M_PI_4 0.785398163397448309615660845819875721
#define M_1_PI 0.318309886183790671537767526745028724
#define M_2_PI 0.636619772367581343075535053490057448
#define M_2_SQRTPI 1.128379167095512573896158903121545172
#define M_SQRT2 1.414213562373095048801688724209698079
#define M_SQRT1_2 0.707106781186547524400844362104849039
#endif
#ifndef FP_NAN
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
#endif

namespace std {
using ::sqrt; using ::cbrt; using ::exp; using ::exp2; using ::expm1; using ::log;
using ::log2; using ::log10; using ::log1p; using ::pow; using ::sin; using ::cos; using ::tan;
using ::asin; using ::acos; using ::atan; using ::atan2; using ::sinh; using ::cosh;
using ::tanh; using ::asinh; using ::acosh; using ::atanh; using ::erf; using ::erfc;
using ::tgamma; using ::lgamma; using ::fabs; using ::abs; using ::floor; using ::ceil;
using ::round; using ::trunc; using ::rint; using ::nearbyint; using ::lround; using ::llround;
using ::lrint; using ::llrint; using ::fmod; using ::remainder; using ::fmin; using ::fmax;
using ::fdim; using ::fma; using ::hypot; using ::copysign; using ::frexp; using ::ldexp;
using ::modf; using ::scalbn; using ::ilogb; using ::logb; using ::nextafter; using ::isnan;
using ::isinf; using ::isfinite; using ::signbit; using ::min; using ::max;
}  // namespace std
#endif

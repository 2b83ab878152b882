// cuda_bf16.h for tests/emu/ (host C++ only): the __nv_bfloat16 that problems/attention/shared/
// attention_ref.cuh reads and writes, so that the emulated checks (tests/emu/emu_attention.cc)
// compile it on a machine without CUDA. A 16-bit bfloat16 pattern (float's 8 exponent bits, 7
// mantissa bits); conversions to float are exact, and __double2bfloat16 rounds to nearest even
// directly from double (not via float: double rounding), with subnormals, overflow to inf and NaN.
#ifndef KC_EMU_CUDA_BF16_H
#define KC_EMU_CUDA_BF16_H

#include "cuda_fp16.h" /* emu_round16, emu_value16 */

struct __nv_bfloat16 {
    uint16_t x;
};

inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { return __nv_bfloat16{b}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }
inline float __bfloat162float(__nv_bfloat16 h) { return (float)emu_value16(h.x, 8, 7); }
inline __nv_bfloat16 __double2bfloat16(double x) { return __nv_bfloat16{emu_round16(x, 8, 7)}; }
inline __nv_bfloat16 __float2bfloat16(float x) { return __double2bfloat16(x); } /* exact in double */

#endif

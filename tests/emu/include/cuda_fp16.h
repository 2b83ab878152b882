// cuda_fp16.h for tests/emu/ (host C++ only): the __half that problems/attention/shared/
// attention_ref.cuh reads and writes, so that the emulated checks (tests/emu/emu_attention.cc)
// compile it on a machine without CUDA. A 16-bit IEEE binary16 pattern; conversions to float are
// exact, and __double2half rounds to nearest even directly from double (not via float, whose
// double rounding CUDA's __double2half does not do), with subnormals, overflow to inf and NaN.
// emu_round16 is shared with cuda_bf16.h.
#ifndef KC_EMU_CUDA_FP16_H
#define KC_EMU_CUDA_FP16_H

#include <cmath>
#include <cstdint>

/* x rounded to nearest even into a 16-bit format of EBITS exponent and MBITS mantissa bits (1 +
 * EBITS + MBITS == 16): its bit pattern. NaN gives a quiet NaN of x's sign. */
inline uint16_t emu_round16(double x, int EBITS, int MBITS)
{
    const uint16_t sign = std::signbit(x) ? (uint16_t)0x8000u : (uint16_t)0;
    const uint32_t inf = ((1u << EBITS) - 1) << MBITS;
    if (std::isnan(x))
        return (uint16_t)(sign | inf | (1u << (MBITS - 1)));
    const double a = std::fabs(x);
    if (std::isinf(a))
        return (uint16_t)(sign | inf);
    if (a == 0)
        return sign;
    const int bias = (1 << (EBITS - 1)) - 1, emin = 1 - bias;
    int e = std::ilogb(a); /* exact, double subnormals included */
    if (e < emin)
        e = emin; /* a subnormal of the format: the quantum is that of the smallest normals */
    /* a in units of the quantum 2^(e - MBITS): the scaling is exact, nearbyint rounds to nearest
     * even (the default mode), and the integer part is below 2^(MBITS + 1) */
    const double n = std::nearbyint(std::ldexp(a, MBITS - e));
    /* normal: exponent field e + bias over the mantissa n - 2^MBITS (a carry of n to 2^(MBITS+1)
     * moves into the exponent); subnormal (ilogb below emin): the field is 0 and the pattern is n,
     * whose carry to 2^MBITS is the smallest normal */
    const bool normal = std::ilogb(a) >= emin;
    const uint64_t bits = normal ? ((uint64_t)(e + bias) << MBITS) + ((uint64_t)n - (1u << MBITS)) : (uint64_t)n;
    return (uint16_t)(sign | (bits >= inf ? inf : (uint32_t)bits));
}

/* the value of a 16-bit pattern of that format (exact in double) */
inline double emu_value16(uint16_t h, int EBITS, int MBITS)
{
    const int bias = (1 << (EBITS - 1)) - 1;
    const int field = (h & 0x7fff) >> MBITS, mant = h & ((1 << MBITS) - 1);
    double v;
    if (field == (1 << EBITS) - 1)
        v = mant ? NAN : INFINITY;
    else if (field == 0)
        v = std::ldexp((double)mant, 1 - bias - MBITS);
    else
        v = std::ldexp((double)(mant | (1 << MBITS)), field - bias - MBITS);
    return (h & 0x8000) ? -v : v;
}

struct __half {
    uint16_t x;
};

inline __half __ushort_as_half(unsigned short b) { return __half{b}; }
inline unsigned short __half_as_ushort(__half h) { return h.x; }
inline float __half2float(__half h) { return (float)emu_value16(h.x, 5, 10); }
inline __half __double2half(double x) { return __half{emu_round16(x, 5, 10)}; }
inline __half __float2half(float x) { return __double2half(x); } /* a float is exact in double */

#endif

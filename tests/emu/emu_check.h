// emu_check: what the CPU checks of tests/emu/ share besides the emulator (tests/emu/cuda_emu.h):
// the distance of two floats in ulps, drawn inputs, and picking a whole number in a range.
#ifndef KC_EMU_CHECK_H
#define KC_EMU_CHECK_H

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace emu_check {

/* distance in float ulps (both finite) */
inline long long ulps(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
    long long la = ia < 0 ? (long long)INT32_MIN - ia : ia, lb = ib < 0 ? (long long)INT32_MIN - ib : ib;
    return la > lb ? la - lb : lb - la;
}

/* n values of N(mu, 1) */
template <class T> std::vector<T> normal(std::mt19937 &rng, size_t n, T mu = 0)
{
    std::normal_distribution<T> d(mu, 1);
    std::vector<T> v(n);
    for (T &x : v)
        x = d(rng);
    return v;
}

/* n values of U(lo, hi) */
template <class T> std::vector<T> uniform(std::mt19937 &rng, size_t n, T lo, T hi)
{
    std::uniform_real_distribution<T> d(lo, hi);
    std::vector<T> v(n);
    for (T &x : v)
        x = d(rng);
    return v;
}

/* a whole number in [lo, hi] */
inline int pick(std::mt19937 &rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

} // namespace emu_check

#endif

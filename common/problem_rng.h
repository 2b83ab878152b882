/* problem_rng: the integer-only generator behind drawn dims (problem_hidden.c, problem_cover.c):
 * splitmix64 (Steele, Lea, Flood 2014: state += 0x9e3779b97f4a7c15, then the 30/27/31
 * xor-shift-multiply finalizer) seeded from the FNV-1a 64-bit hash of the problem id, and the
 * few integer helpers both draws use. No libm, so a draw is the same on every machine. */
#ifndef KC_PROBLEM_RNG_H
#define KC_PROBLEM_RNG_H
#include <stdint.h>

typedef struct rng {
    uint64_t x;
} rng;

static inline uint64_t rng_next(rng *r)
{
    uint64_t z = (r->x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* The generator of (problem id, seed, stream): stream tells apart the draws of one seed. */
static inline rng rng_for(const char *problem_id, uint64_t seed, uint64_t stream)
{
    rng r = {fnv1a64(problem_id)};
    r.x = rng_next(&r) ^ seed;
    r.x = rng_next(&r) ^ stream;
    return r;
}

/* Uniform in [lo, hi] (modulo bias below 2^-23 for spans up to 2^41). */
static inline int64_t uniform_in(rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static inline int is_prime(int64_t n)
{
    if (n < 2)
        return 0;
    if (n % 2 == 0 || n % 3 == 0)
        return n <= 3;
    for (int64_t f = 5; f * f <= n; f += 6)
        if (n % f == 0 || n % (f + 2) == 0)
            return 0;
    return 1;
}

#define RNG_DIVISOR_LIMIT (1LL << 32)

/* A divisor of n drawn uniformly among all of them into *out; -1 when n is outside
 * 1..RNG_DIVISOR_LIMIT (trial division stays cheap below it). */
static inline int rng_divisor(rng *r, int64_t n, int64_t *out)
{
    if (n < 1 || n > RNG_DIVISOR_LIMIT)
        return -1;
    int64_t divs[4096];
    int k = 0;
    for (int64_t f = 1; f * f <= n && k < 4094; f++)
        if (n % f == 0) {
            divs[k++] = f;
            if (f != n / f)
                divs[k++] = n / f;
        }
    *out = divs[rng_next(r) % (uint64_t)k];
    return 0;
}

#endif

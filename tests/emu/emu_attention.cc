// emu_attention: the attention suite's reference kernel (problems/attention/shared/
// attention_ref.cuh, pasted into the ten problems/attention/0*.cu) run on the CPU by
// tests/emu/cuda_emu.h (tests/cli/test_ref_emulated.sh prepares the header with tests/emu/prep.py
// and builds this file with tests/emu/include/ for cuda_fp16.h and cuda_bf16.h), once per
// variant the references use (element type, mask_mod, score_mod), against a plain attention
// loop in double over the same inputs: scores (q . k) / sqrt(D) with the score mod, masked pairs
// left out, softmax over the scored keys, times v. Shapes off the kernel's 64-query and 64-key
// tiles (S 1, 5, 70, 130, ...), head dims off its 8-column blocks (D 1, 12, 64, 100), several
// batches and heads, grouped-query head groups, windows of 0, inside a tile, across tiles and
// >= S, documents from sorted segment ids of drawn lengths, 2-D neighbourhoods clamped on small
// canvases. Every valid input has a non-empty row (each query scores itself: causal, windows,
// documents and neighbourhoods all keep the diagonal, per the problems' manifests), so rows with
// no scored key are not drawn (the kernel would give 0/0 there, and the operator no result).
//
// Tolerance: the kernel computes in double (exact products, double sums in another order, its
// online softmax's exp(m - m_new) rescaling) and rounds once to the output type; the loop's
// double result rounded the same way must be within 1 ulp of the output type (counted in its bit
// pattern): the two doubles differ by a few double ulps, which can fall on the two sides of one
// rounding boundary, never more. Outputs are NaN-filled before each launch.
// Also checks the host __half and __nv_bfloat16 conversions of tests/emu/include against known
// values. Exit 0 and a summary line, or 1 naming the first mismatches; -v prints each shape's
// CPU time (the whole program takes about 7 s under ASan).
#include "cuda_emu.h"
#include "emu_check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <ctime>
#include <random>
#include <string>

/* each variant: the header once in its own namespace, with its macros and a renamed kernel (the
 * header undefines ATT_T, ATT_MASK and ATT_MOD itself) */
namespace v001 {
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL)
#define ATT_MOD (0)
#define attention_ref attention_ref_001
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v001
namespace v002 {
#define ATT_T float
#define ATT_MASK (CAUSAL)
#define ATT_MOD (0)
#define attention_ref attention_ref_002
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v002
namespace v003 {
#define ATT_T __nv_bfloat16
#define ATT_MASK (0)
#define ATT_MOD (RELBIAS)
#define attention_ref attention_ref_003
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v003
namespace v004 {
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL)
#define ATT_MOD (ALIBI)
#define attention_ref attention_ref_004
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v004
namespace v005 {
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL | WINDOW)
#define ATT_MOD (0)
#define attention_ref attention_ref_005
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v005
namespace v006 {
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL | DOCUMENT)
#define ATT_MOD (0)
#define attention_ref attention_ref_006
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v006
namespace v007 {
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL)
#define ATT_MOD (SOFTCAP)
#define attention_ref attention_ref_007
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v007
namespace v008 {
#define ATT_T __half
#define ATT_MASK (CAUSAL)
#define ATT_MOD (0)
#define attention_ref attention_ref_008
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v008
namespace v009 {
#define ATT_T __half
#define ATT_MASK (NEIGHBOR2D)
#define ATT_MOD (0)
#define attention_ref attention_ref_009
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v009
namespace v010 {
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL | WINDOW)
#define ATT_MOD (SOFTCAP)
#define attention_ref attention_ref_010
#include "attention_ref.cuh"
#undef attention_ref
} // namespace v010

namespace {

using v001::att::ALIBI;
using v001::att::CAUSAL;
using v001::att::DOCUMENT;
using v001::att::NEIGHBOR2D;
using v001::att::RELBIAS;
using v001::att::SOFTCAP;
using v001::att::WINDOW;

int failures = 0, printed = 0; /* failed checks; mismatches printed (the first 20) */

/* the element types: from and to double (rounded once, to nearest even), and an ordered integer
 * of the bit pattern whose differences count ulps */
double to_double(float x) { return x; }
double to_double(__half x) { return __half2float(x); }
double to_double(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> T from_double(double x);
template <> float from_double<float>(double x) { return (float)x; }
template <> __half from_double<__half>(double x) { return __double2half(x); }
template <> __nv_bfloat16 from_double<__nv_bfloat16>(double x) { return __double2bfloat16(x); }
long long ulps(float a, float b) { return emu_check::ulps(a, b); }
long long ordered16(uint16_t b) { return (b & 0x8000) ? -(long long)(b & 0x7fff) : (long long)b; }
long long ulps(__half a, __half b) { return std::llabs(ordered16(a.x) - ordered16(b.x)); }
long long ulps(__nv_bfloat16 a, __nv_bfloat16 b) { return std::llabs(ordered16(a.x) - ordered16(b.x)); }
bool is_nan(float x) { return std::isnan(x); }
template <class T> bool is_nan(T x) { return std::isnan(to_double(x)); }
template <class T> T nan_fill();
template <> float nan_fill<float>() { return NAN; }
template <> __half nan_fill<__half>() { return __ushort_as_half(0x7fff); }
template <> __nv_bfloat16 nan_fill<__nv_bfloat16>() { return __ushort_as_bfloat16(0x7fff); }

/* ---- the host conversions against known values ---- */
void expect_bits(const char *what, double x, unsigned got, unsigned want)
{
    if (got == want)
        return;
    if (failures++ < 20)
        fprintf(stderr, "%s(%.17g) is 0x%04x, expected 0x%04x\n", what, x, got, want);
}

void check_conversions()
{
    auto h = [](double x) { return (unsigned)__half_as_ushort(__double2half(x)); };
    auto bf = [](double x) { return (unsigned)__bfloat16_as_ushort(__double2bfloat16(x)); };
    const struct {
        double x;
        unsigned half, bf16;
    } known[] = { /* the patterns as exact rational rounding (Python's fractions) gives them */
        {0.0, 0x0000, 0x0000},
        {-0.0, 0x8000, 0x8000},
        {1.0, 0x3c00, 0x3f80},
        {-2.0, 0xc000, 0xc000},
        {65504.0, 0x7bff, 0x4780},        /* half's largest */
        {65519.99, 0x7bff, 0x4780},
        {65520.0, 0x7c00, 0x4780},        /* half: the tie above 65504 goes to inf */
        {1e6, 0x7c00, 0x4974},            /* 999424 = 0x4974 in bf16 */
        {-1e300, 0xfc00, 0xff80},         /* overflow of both */
        {INFINITY, 0x7c00, 0x7f80},
        {-INFINITY, 0xfc00, 0xff80},
        {1.0 + 0x1p-11, 0x3c00, 0x3f80},  /* half: tie to even (down) */
        {1.0 + 3 * 0x1p-11, 0x3c02, 0x3f80}, /* half: tie to even (up) */
        {1.0 + 0x1p-11 + 0x1p-40, 0x3c01, 0x3f80}, /* just above the tie: via float it would tie */
        {1.0 + 0x1p-8, 0x3c04, 0x3f80},   /* bf16: tie to even (down) */
        {1.0 + 3 * 0x1p-8, 0x3c0c, 0x3f82}, /* bf16: tie to even (up) */
        {1.0 + 0x1p-8 + 0x1p-30, 0x3c04, 0x3f81}, /* bf16: just above the tie */
        {0x1p-24, 0x0001, 0x3380},        /* half's smallest subnormal */
        {0x1p-25, 0x0000, 0x3300},        /* half: tie to even (0) */
        {0x1p-25 + 0x1p-60, 0x0001, 0x3300}, /* just above: up */
        {3 * 0x1p-25, 0x0002, 0x33c0},    /* half: tie to even (2) */
        {0x1p-14, 0x0400, 0x3880},        /* half's smallest normal */
        {0x3ffp-24, 0x03ff, 0x3880},      /* half's largest subnormal; bf16 rounds it up to 2^-14 */
        {0x7ffp-25, 0x0400, 0x3880},      /* half: rounds up into the smallest normal */
        {-0x1p-24, 0x8001, 0xb380},
        {0x1p-133, 0x0000, 0x0001},       /* bf16's smallest subnormal */
        {0x1p-134, 0x0000, 0x0000},       /* bf16: tie to even (0) */
        {0x1p-126, 0x0000, 0x0080},       /* bf16's smallest normal */
        {0x1p-1074, 0x0000, 0x0000},      /* a double subnormal */
        {3.0e38, 0x7c00, 0x7f62},
        {0x1.fep127, 0x7c00, 0x7f7f},     /* bf16's largest */
        {0x1.ffp127, 0x7c00, 0x7f80},     /* bf16: the tie above it goes to inf */
        {0.1, 0x2e66, 0x3dcd},
    };
    for (const auto &k : known) {
        expect_bits("__double2half", k.x, h(k.x), k.half);
        expect_bits("__double2bfloat16", k.x, bf(k.x), k.bf16);
    }
    if (!std::isnan(__half2float(__double2half(NAN))) || !std::isnan(__bfloat162float(__double2bfloat16(NAN))))
        failures++, fprintf(stderr, "NaN does not convert to NaN\n");
    /* every finite pattern of both formats converts back to itself exactly */
    for (unsigned b = 0; b < 0x10000; b++) {
        const __half x = __ushort_as_half((unsigned short)b);
        const __nv_bfloat16 y = __ushort_as_bfloat16((unsigned short)b);
        if (!std::isnan(__half2float(x)))
            expect_bits("__double2half of a half", __half2float(x), h(__half2float(x)), b);
        if (!std::isnan(__bfloat162float(y)))
            expect_bits("__double2bfloat16 of a bf16", __bfloat162float(y), bf(__bfloat162float(y)), b);
    }
    if (__half2float(__ushort_as_half(0x7bff)) != 65504.0f || __half2float(__ushort_as_half(0x0001)) != 0x1p-24f ||
        __half2float(__ushort_as_half(0x3555)) != 0x1.554p-2f || __half2float(__ushort_as_half(0xfc00)) != -INFINITY ||
        __bfloat162float(__ushort_as_bfloat16(0x3f81)) != 1.0f + 0x1p-7f ||
        __bfloat162float(__ushort_as_bfloat16(0x0001)) != 0x1p-133f ||
        __bfloat162float(__ushort_as_bfloat16(0x7f7f)) != 0x1.fep127f)
        failures++, fprintf(stderr, "__half2float or __bfloat162float give wrong values\n");
}

/* ---- attention ---- */
struct shape {
    int B, HQ, HKV, S, D, W, CH, CW, KH, KW;
    double cap, qk_std; /* softcap, and the std of q and k */
    std::string text() const
    {
        char s[200];
        snprintf(s, sizeof s, "B=%d HQ=%d HKV=%d S=%d D=%d W=%d canvas %dx%d window %dx%d softcap %g", B, HQ,
                 HKV, S, D, W, CH, CW, KH, KW, cap);
        return s;
    }
};

long long win_start(long long p, long long KN, long long N)
{
    return std::min(std::max(p - KN / 2, 0LL), N - KN);
}

bool keep(int mask, const shape &s, const int *seg, long long i, long long j)
{
    if ((mask & CAUSAL) && j > i)
        return false;
    if ((mask & WINDOW) && i - j > s.W)
        return false;
    if ((mask & DOCUMENT) && seg[i] != seg[j])
        return false;
    if (mask & NEIGHBOR2D) {
        const long long r0 = win_start(i / s.CW, s.KH, s.CH), c0 = win_start(i % s.CW, s.KW, s.CW);
        const long long kr = j / s.CW, kc = j % s.CW;
        if (kr < r0 || kr >= r0 + s.KH || kc < c0 || kc >= c0 + s.KW)
            return false;
    }
    return true;
}

/* the plain loop: out[b, h, i, :] in double */
template <class T>
std::vector<double> attention_loops(int mask, int mod, const shape &s, const std::vector<T> &q,
                                    const std::vector<T> &k, const std::vector<T> &v, const std::vector<T> &bias,
                                    const std::vector<int> &seg)
{
    const long long S = s.S, D = s.D;
    std::vector<double> out((size_t)s.B * s.HQ * S * D);
    std::vector<double> sc(S);
    for (long long b = 0; b < s.B; b++)
        for (long long h = 0; h < s.HQ; h++) {
            const long long hk = h / (s.HQ / s.HKV);
            const T *qb = &q[(size_t)((b * s.HQ + h) * S * D)];
            const T *kb = &k[(size_t)((b * s.HKV + hk) * S * D)], *vb = &v[(size_t)((b * s.HKV + hk) * S * D)];
            const int *sg = seg.empty() ? nullptr : &seg[(size_t)(b * S)];
            for (long long i = 0; i < S; i++) {
                double mx = -INFINITY;
                for (long long j = 0; j < S; j++) {
                    if (!keep(mask, s, sg, i, j)) {
                        sc[j] = -INFINITY;
                        continue;
                    }
                    double dot = 0;
                    for (long long d = 0; d < D; d++)
                        dot += to_double(qb[i * D + d]) * to_double(kb[j * D + d]);
                    double x = dot / std::sqrt((double)D);
                    if (mod & RELBIAS)
                        x += to_double(bias[(size_t)(h * (2 * S - 1) + i - j + S - 1)]);
                    if (mod & ALIBI)
                        x += std::exp2(-8.0 * (double)(h + 1) / s.HQ) * (double)(j - i);
                    if (mod & SOFTCAP)
                        x = s.cap * std::tanh(x / s.cap);
                    sc[j] = x;
                    mx = std::max(mx, x);
                }
                double l = 0;
                for (long long j = 0; j < S; j++)
                    l += sc[j] == -INFINITY ? 0.0 : (sc[j] = std::exp(sc[j] - mx));
                double *o = &out[(size_t)(((b * s.HQ + h) * S + i) * D)];
                for (long long d = 0; d < D; d++) {
                    double acc = 0;
                    for (long long j = 0; j < S; j++)
                        if (sc[j] != -INFINITY)
                            acc += sc[j] * to_double(vb[j * D + d]);
                    o[d] = acc / l;
                }
            }
        }
    return out;
}

template <class T>
using kernel_fn = void (*)(const T *, const T *, const T *, T *, const T *, const int *, long long, long long,
                           long long, long long, long long, long long, long long, long long, long long, double);

struct tally {
    int variants = 0, shapes = 0;
    long long outputs = 0;
    bool verbose = false; /* the CPU time of each shape on stderr */
};

template <class T>
void check_shape(const char *name, kernel_fn<T> kernel, int mask, int mod, const shape &s, std::mt19937 &rng,
                 tally &t)
{
    const clock_t start = clock();
    const size_t nq = (size_t)s.B * s.HQ * s.S * s.D, nkv = (size_t)s.B * s.HKV * s.S * s.D;
    auto draw = [&](size_t n, double sd) {
        std::vector<T> x(n);
        std::normal_distribution<double> d(0, sd);
        for (T &e : x)
            e = from_double<T>(d(rng));
        return x;
    };
    const std::vector<T> q = draw(nq, s.qk_std), k = draw(nkv, s.qk_std), v = draw(nkv, 1);
    const std::vector<T> bias = (mod & RELBIAS) ? draw((size_t)s.HQ * (2 * s.S - 1), 1) : std::vector<T>();
    std::vector<int> seg;
    if (mask & DOCUMENT) { /* documents of drawn lengths, ids 0, 1, 2, ... along each row */
        seg.resize((size_t)s.B * s.S);
        for (int b = 0; b < s.B; b++)
            for (int i = 0, id = 0; i < s.S; id++)
                for (int len = emu_check::pick(rng, 1, std::max(1, s.S / 3)); len > 0 && i < s.S; len--)
                    seg[(size_t)b * s.S + i++] = id;
    }
    const std::vector<double> want = attention_loops(mask, mod, s, q, k, v, bias, seg);
    std::vector<T> out(nq, nan_fill<T>());
    emu::launch(dim3((unsigned)((s.S + 63) / 64), (unsigned)s.HQ, (unsigned)s.B), dim3(256), [&] {
        kernel(q.data(), k.data(), v.data(), out.data(), bias.empty() ? nullptr : bias.data(),
               seg.empty() ? nullptr : seg.data(), s.S, s.D, s.HQ, s.HKV, s.W, s.CH, s.CW, s.KH, s.KW, s.cap);
    });
    t.shapes++;
    if (t.verbose)
        fprintf(stderr, "%s, %s: %.2f s\n", name, s.text().c_str(), (double)(clock() - start) / CLOCKS_PER_SEC);
    int bad = 0;
    for (size_t i = 0; i < nq; i++) {
        t.outputs++;
        const T w = from_double<T>(want[i]);
        if (!is_nan(out[i]) && ulps(out[i], w) <= 1)
            continue;
        if (bad++ == 0)
            failures++;
        if (bad <= 3 && printed++ < 20) {
            const size_t d = i % s.D, r = i / s.D, qi = r % s.S, h = r / s.S % s.HQ, b = r / s.S / s.HQ;
            fprintf(stderr, "%s, %s: out[%zu, %zu, %zu, %zu] is %.9g, expected %.9g (%.17g)\n", name,
                    s.text().c_str(), b, h, qi, d, to_double(out[i]), to_double(w), want[i]);
        }
    }
}

/* the shapes of a variant: its launch line's dims (H for both head counts unless grouped), off
 * the tiles. The emulator's cost is about the blocks times the key tiles each scores times the
 * 8-column blocks of D, so the wide head (wide_d: 64 or 100, alternating over the variants) comes
 * with one tile, the long rows (S 70, 130: ragged query and key tiles, a full middle tile) with
 * narrow heads (D 1, 5, 12) */
std::vector<shape> shapes_for(int mask, int mod, bool gqa, int wide_d)
{
    const double cap = (mod & SOFTCAP) ? 30 : 0, sd = (mod & SOFTCAP) ? 2.5 : 1;
    std::vector<shape> v;
    if (mask & NEIGHBOR2D) { /* B, H, CH, CW, KH, KW, D: S = CH * CW; odd windows within the canvas */
        for (auto [B, H, CH, CW, KH, KW, D] :
             {std::tuple{1, 1, 1, 1, 1, 1, 1}, {2, 1, 5, 1, 3, 1, 12}, {1, 2, 7, 10, 3, 5, 12}, {1, 1, 13, 10, 5, 3, 1},
              {1, 1, 9, 15, 9, 13, 5}, {1, 1, 3, 11, 3, 5, wide_d}})
            v.push_back({B, H, H, CH * CW, D, 0, CH, CW, KH, KW, cap, sd});
        return v;
    }
    /* B, HQ and HKV (grouped variants: groups of 2 over 3 kv heads, where h / (HQ / HKV) and
     * h % HKV differ, and 2 over 1 with 2 batches) or H (the others), S, D, W (window variants:
     * the diagonal only, inside a tile, across tiles, >= S) */
    for (auto [B, HQ, HKV, H, S, D, W] :
         {std::tuple{1, 1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 33, wide_d, 5}, {1, 6, 3, 2, 5, 12, 3}, {1, 2, 1, 2, 70, 12, 0},
          {1, 2, 1, 1, 130, 5, 64}, {2, 2, 1, 1, 70, 1, 70}})
        v.push_back({B, gqa ? HQ : H, gqa ? HKV : H, S, D, (mask & WINDOW) ? W : 0, 0, 0, 0, 0, cap, sd});
    if (mod & SOFTCAP) /* a cap that bites hard */
        v.push_back({1, 2, gqa ? 1 : 2, 33, 12, (mask & WINDOW) ? 9 : 0, 0, 0, 0, 0, 3, sd});
    return v;
}

template <class T>
void check_variant(const char *name, kernel_fn<T> kernel, int mask, int mod, bool gqa, std::mt19937 &rng,
                   tally &t)
{
    for (const shape &s : shapes_for(mask, mod, gqa, t.variants++ % 2 ? 100 : 64))
        check_shape<T>(name, kernel, mask, mod, s, rng, t);
}

} // namespace

int main(int argc, char **argv)
{
    check_conversions();
    std::mt19937 rng(20261201);
    tally t;
    t.verbose = argc > 1 && std::string(argv[1]) == "-v";
    check_variant<__nv_bfloat16>("001_causal", v001::attention_ref_001, CAUSAL, 0, false, rng, t);
    check_variant<float>("002_causal_fp32", v002::attention_ref_002, CAUSAL, 0, false, rng, t);
    check_variant<__nv_bfloat16>("003_relative_bias", v003::attention_ref_003, 0, RELBIAS, false, rng, t);
    check_variant<__nv_bfloat16>("004_alibi_causal", v004::attention_ref_004, CAUSAL, ALIBI, false, rng, t);
    check_variant<__nv_bfloat16>("005_sliding_window", v005::attention_ref_005, CAUSAL | WINDOW, 0, false, rng, t);
    check_variant<__nv_bfloat16>("006_document_causal", v006::attention_ref_006, CAUSAL | DOCUMENT, 0, false, rng, t);
    check_variant<__nv_bfloat16>("007_softcap_causal", v007::attention_ref_007, CAUSAL, SOFTCAP, false, rng, t);
    check_variant<__half>("008_gqa_causal", v008::attention_ref_008, CAUSAL, 0, true, rng, t);
    check_variant<__half>("009_neighborhood_2d", v009::attention_ref_009, NEIGHBOR2D, 0, false, rng, t);
    check_variant<__nv_bfloat16>("010_gqa_window_softcap", v010::attention_ref_010, CAUSAL | WINDOW, SOFTCAP, true,
                                 rng, t);
    if (failures) {
        fprintf(stderr, "emu_attention: %d check(s) failed\n", failures);
        return 1;
    }
    printf("emu_attention: attention_ref's 10 variants (001_causal, 002_causal_fp32, 003_relative_bias, "
           "004_alibi_causal, 005_sliding_window, 006_document_causal, 007_softcap_causal, 008_gqa_causal, "
           "009_neighborhood_2d, 010_gqa_window_softcap) agree with plain loops in double within 1 ulp on %d "
           "shapes (%lld outputs compared); the host half and bf16 conversions match known values\n",
           t.shapes, t.outputs);
    return 0;
}

// emu_conv_transpose: the transposed-convolution kernels of problems/shared/, run on the CPU by
// tests/emu/cuda_emu.h (headers prepared by tests/emu/prep.py, as for emu_shared_refs.cc),
// against a plain scatter loop in double over the same float inputs, written from PyTorch's
// ConvTranspose definition (x[b, ci, i] * w[ci, j, k] added to y[b, g*(CO/G) + j, i*S - P + k*DIL]
// per axis; output size (I - 1)*S - 2*P + DIL*(K - 1) + OP + 1):
//   conv_transpose2d_ref.cuh (register-blocked; KWF 3, 4, 5 and 7 as the references define it;
//   its fast path where KW = KWF and the row's stride and dilation are 1, and its general path,
//   which must give the fast path's outputs bit for bit: same products, same order);
//   conv_transpose2d_direct_ref.cuh and conv_transpose2d_gather_ref.cuh (one thread per output;
//   the gather one has no groups, so it runs on the G = 1 shapes only);
//   conv_transpose3d_ref.cuh (register-blocked by stride phase; COB 16 and 12 as the references
//   define it) and conv_transpose3d_direct_ref.cuh.
// Each kernel runs with its references' launch (the `// @launch` lines of problems/level1 and
// level2: grid, block, argument order), on fixed shapes taken from the references' dims (small
// and alt sets, scaled down) and on drawn shapes: sizes off the 4-column / 4-row / 16- or
// 12-channel / 128-thread blocks, size 1, strides larger than the dilated kernel, groups
// (depthwise included), padding, output padding, dilation, several staged weight chunks, and
// grids smaller than the work (both grid-stride loops of the blocked 2-D kernel). Outputs are
// NaN-filled before every launch, so an output no thread writes fails.
// Tolerance: every kernel forms each product of two floats exactly in double, sums in double and
// rounds to float once (each header says so), as the loop does in another order: within one
// float ulp of the loop's. A second test covers outputs that cancel far below their terms: both
// double sums lie within n * 2^-53 * sum|products| of the exact sum (n products), so the kernel's
// output may also differ from the loop's double sum by that twice plus one float ulp.
// Exit 0 and a summary line, or 1 naming the first kernels, shapes and outputs that differ.
// Usage: emu_conv_transpose [random draws, default 120]
#include "cuda_emu.h"
#include "emu_check.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>


/* Every header names its kernel conv_transpose2d_ref or conv_transpose3d_ref (extern "C"), and
 * the blocked ones are pasted once per KWF / COB: each copy gets its own namespace and name. */
namespace ct2_kwf3 {
#define KWF 3
#define conv_transpose2d_ref conv_transpose2d_ref_kwf3
#include "conv_transpose2d_ref.cuh"
#undef conv_transpose2d_ref
} // namespace ct2_kwf3
namespace ct2_kwf4 {
#define KWF 4
#define conv_transpose2d_ref conv_transpose2d_ref_kwf4
#include "conv_transpose2d_ref.cuh"
#undef conv_transpose2d_ref
} // namespace ct2_kwf4
namespace ct2_kwf5 {
#define KWF 5
#define conv_transpose2d_ref conv_transpose2d_ref_kwf5
#include "conv_transpose2d_ref.cuh"
#undef conv_transpose2d_ref
} // namespace ct2_kwf5
namespace ct2_kwf7 {
#define KWF 7
#define conv_transpose2d_ref conv_transpose2d_ref_kwf7
#include "conv_transpose2d_ref.cuh"
#undef conv_transpose2d_ref
} // namespace ct2_kwf7
namespace ct2_direct {
#define conv_transpose2d_ref conv_transpose2d_direct_ref
#include "conv_transpose2d_direct_ref.cuh"
#undef conv_transpose2d_ref
} // namespace ct2_direct
namespace ct2_gather {
#define conv_transpose2d_ref conv_transpose2d_gather_ref
#include "conv_transpose2d_gather_ref.cuh"
#undef conv_transpose2d_ref
} // namespace ct2_gather
namespace ct3_cob16 {
#define COB 16
#define conv_transpose3d_ref conv_transpose3d_ref_cob16
#include "conv_transpose3d_ref.cuh"
#undef conv_transpose3d_ref
} // namespace ct3_cob16
namespace ct3_cob12 {
#define COB 12
#define conv_transpose3d_ref conv_transpose3d_ref_cob12
#include "conv_transpose3d_ref.cuh"
#undef conv_transpose3d_ref
} // namespace ct3_cob12
namespace ct3_direct {
#define conv_transpose3d_ref conv_transpose3d_direct_ref
#include "conv_transpose3d_direct_ref.cuh"
#undef conv_transpose3d_ref
} // namespace ct3_direct

namespace {

using emu_check::normal;
using emu_check::ulps;

long long cdiv(long long a, long long b) { return (a + b - 1) / b; }

/* A transposed convolution; axes 0, 1, 2 are d, h, w (a 2-D shape has the d axis of size 1: I,
 * K, S, DL 1 and P, OP 0). */
struct shape {
    int dims; /* 2 or 3 */
    int B, CI, CO, G;
    int I[3], K[3], S[3], P[3], OP[3], DL[3];
    int cap; /* at most this many blocks along each grid axis (0: the references' grid) */
    int O(int a) const { return (I[a] - 1) * S[a] - 2 * P[a] + DL[a] * (K[a] - 1) + OP[a] + 1; }
    long long outputs() const { return (long long)B * CO * O(0) * O(1) * O(2); }
    long long in_size() const { return (long long)B * CI * I[0] * I[1] * I[2]; }
    long long w_size() const { return (long long)CI * (CO / G) * K[0] * K[1] * K[2]; }
    bool valid() const
    {
        for (int a = 0; a < 3; a++)
            if (O(a) < 1 || OP[a] >= std::max(S[a], DL[a]) || P[a] < 0)
                return false; /* PyTorch: output_padding < max(stride, dilation) */
        return CI % G == 0 && CO % G == 0;
    }
    std::string text() const
    {
        char s[400];
        const int a0 = dims == 3 ? 0 : 1;
        std::string t[6];
        const int *v[6] = {I, K, S, P, OP, DL};
        for (int i = 0; i < 6; i++)
            for (int a = a0; a < 3; a++)
                t[i] += (a > a0 ? "x" : "") + std::to_string(v[i][a]);
        snprintf(s, sizeof s, "%dd B=%d CI=%d CO=%d G=%d in=%s K=%s S=%s P=%s OP=%s DIL=%s out=%s%dx%d%s", dims,
                 B, CI, CO, G, t[0].c_str(), t[1].c_str(), t[2].c_str(), t[3].c_str(), t[4].c_str(),
                 t[5].c_str(), dims == 3 ? (std::to_string(O(0)) + "x").c_str() : "", O(1), O(2),
                 cap ? (" grid cap " + std::to_string(cap)).c_str() : "");
        return s;
    }
};

shape make2(int B, int CI, int CO, int G, int H, int W, int KH, int KW, int SH, int SW, int PH, int PW, int OPH,
            int OPW, int DH, int DW, int cap)
{
    return shape{2, B, CI, CO, G, {1, H, W}, {1, KH, KW}, {1, SH, SW}, {0, PH, PW}, {0, OPH, OPW}, {1, DH, DW}, cap};
}

/* the loop's sums, per output: the double sum, the sum of |products| and their count */
struct expected {
    std::vector<double> sum, mag;
    std::vector<int> n;
};

expected scatter_loops(const shape &s, const std::vector<float> &x, const std::vector<float> &w)
{
    const int cig = s.CI / s.G, cog = s.CO / s.G, O0 = s.O(0), O1 = s.O(1), O2 = s.O(2);
    expected e{std::vector<double>(s.outputs(), 0.0), std::vector<double>(s.outputs(), 0.0),
               std::vector<int>(s.outputs(), 0)};
    for (int b = 0; b < s.B; b++)
        for (int ci = 0; ci < s.CI; ci++)
            for (int id = 0; id < s.I[0]; id++)
                for (int ih = 0; ih < s.I[1]; ih++)
                    for (int iw = 0; iw < s.I[2]; iw++) {
                        const double xv = x[(((size_t)b * s.CI + ci) * s.I[0] + id) * s.I[1] * s.I[2] +
                                            (size_t)ih * s.I[2] + iw];
                        const int g = ci / cig;
                        for (int j = 0; j < cog; j++)
                            for (int kd = 0; kd < s.K[0]; kd++)
                                for (int kh = 0; kh < s.K[1]; kh++)
                                    for (int kw = 0; kw < s.K[2]; kw++) {
                                        const int od = id * s.S[0] - s.P[0] + kd * s.DL[0];
                                        const int oh = ih * s.S[1] - s.P[1] + kh * s.DL[1];
                                        const int ow = iw * s.S[2] - s.P[2] + kw * s.DL[2];
                                        if (od < 0 || od >= O0 || oh < 0 || oh >= O1 || ow < 0 || ow >= O2)
                                            continue; /* lands outside the output: dropped */
                                        const double p =
                                            xv * (double)w[((((size_t)ci * cog + j) * s.K[0] + kd) * s.K[1] + kh) *
                                                               s.K[2] +
                                                           kw];
                                        const size_t o = (((size_t)b * s.CO + g * cog + j) * O0 + od) * O1 * O2 +
                                                         (size_t)oh * O2 + ow;
                                        e.sum[o] += p;
                                        e.mag[o] += std::fabs(p);
                                        e.n[o]++;
                                    }
                    }
    return e;
}

int failures = 0, printed = 0, summaries = 0;
long long compared = 0;

std::string where(const shape &s, size_t i)
{
    const size_t O0 = s.O(0), O1 = s.O(1), O2 = s.O(2);
    char t[120];
    if (s.dims == 3)
        snprintf(t, sizeof t, "[b %zu, co %zu, od %zu, oh %zu, ow %zu]", i / (O2 * O1 * O0 * s.CO),
                 i / (O2 * O1 * O0) % s.CO, i / (O2 * O1) % O0, i / O2 % O1, i % O2);
    else
        snprintf(t, sizeof t, "[b %zu, co %zu, oh %zu, ow %zu]", i / (O2 * O1 * s.CO), i / (O2 * O1) % s.CO,
                 i / O2 % O1, i % O2);
    return t;
}

void report(const char *kernel, const shape &s, size_t i, float got, const char *what, double want, int bad)
{
    if (bad == 1)
        failures++;
    if (bad <= 3 && printed++ < 12)
        fprintf(stderr, "%s, %s: output %zu %s is %.9g, expected %.9g%s\n", kernel, s.text().c_str(), i,
                where(s, i).c_str(), got, want, what);
}

/* each output within one float ulp of the loop's (or within the cancellation bound above) */
void expect_close(const char *kernel, const shape &s, const std::vector<float> &got, const expected &e)
{
    int bad = 0;
    for (size_t i = 0; i < got.size(); i++) {
        compared++;
        const float want = (float)e.sum[i];
        if (std::isfinite(got[i])) {
            if (ulps(got[i], want) <= 1)
                continue;
            const double ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
            if (std::fabs((double)got[i] - e.sum[i]) <= ulp + 2.0 * e.n[i] * std::ldexp(e.mag[i], -53))
                continue;
        }
        report(kernel, s, i, got[i], "", e.sum[i], ++bad);
    }
    if (bad > 3 && summaries++ < 20)
        fprintf(stderr, "%s, %s: %d of %zu outputs differ\n", kernel, s.text().c_str(), bad, got.size());
}

/* bit for bit */
void expect_same(const char *kernel, const shape &s, const std::vector<float> &got, const std::vector<float> &want)
{
    int bad = 0;
    for (size_t i = 0; i < got.size(); i++) {
        compared++;
        if (memcmp(&got[i], &want[i], 4) != 0)
            report(kernel, s, i, got[i], " (the fast path's, bit for bit)", want[i], ++bad);
    }
}

unsigned capped(long long blocks, long long most, int cap)
{
    blocks = std::min(blocks, most);
    return (unsigned)(cap ? std::min<long long>(blocks, cap) : blocks);
}

using blocked2d_fn = void (*)(const float *, const float *, float *, int, int, int, int, int, int, int, int, int,
                              int, int, int, int, int, int, int);

struct blocked2d_variant {
    int kwf;
    blocked2d_fn fn;
    const char *name;
};
const blocked2d_variant blocked2d[] = {
    {3, ct2_kwf3::conv_transpose2d_ref_kwf3, "conv_transpose2d_ref.cuh (KWF 3)"},
    {4, ct2_kwf4::conv_transpose2d_ref_kwf4, "conv_transpose2d_ref.cuh (KWF 4)"},
    {5, ct2_kwf5::conv_transpose2d_ref_kwf5, "conv_transpose2d_ref.cuh (KWF 5)"},
    {7, ct2_kwf7::conv_transpose2d_ref_kwf7, "conv_transpose2d_ref.cuh (KWF 7)"},
};

/* level1/057, 064, 065, 069 and level2's: dim3(min(G*cdiv(CO/G, 16)*cdiv(OH*cdiv(OW, 4), 128),
 * 2147483647), min(B, 65535)) blocks of 128 */
void run_blocked2d(const blocked2d_variant &v, const shape &s, const std::vector<float> &x,
                   const std::vector<float> &w, std::vector<float> &y)
{
    const int OH = s.O(1), OW = s.O(2);
    const dim3 grid(capped(s.G * cdiv(s.CO / s.G, 16) * cdiv((long long)OH * cdiv(OW, 4), 128), 2147483647, s.cap),
                    capped(s.B, 65535, s.cap));
    std::fill(y.begin(), y.end(), NAN);
    emu::launch(grid, dim3(128), [&] {
        v.fn(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.I[1], s.I[2], OH, OW, s.K[1], s.K[2], s.S[1], s.S[2],
             s.P[1], s.P[2], s.DL[1], s.DL[2], s.G);
    });
}

/* level1/071 and 075: min(cdiv(B*CO*OH*OW, 256), 65536) blocks of 256 */
void run_direct2d(const shape &s, const std::vector<float> &x, const std::vector<float> &w, std::vector<float> &y)
{
    std::fill(y.begin(), y.end(), NAN);
    emu::launch(dim3(capped(cdiv(s.outputs(), 256), 65536, s.cap)), dim3(256), [&] {
        ct2_direct::conv_transpose2d_direct_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.I[1], s.I[2],
                                                s.O(1), s.O(2), s.K[1], s.K[2], s.S[1], s.S[2], s.P[1], s.P[2],
                                                s.DL[1], s.DL[2], s.G);
    });
}

/* level1/078 and 081: min(cdiv(B*CO*OH*OW, 256), 1048576) blocks of 256; no groups */
void run_gather2d(const shape &s, const std::vector<float> &x, const std::vector<float> &w, std::vector<float> &y)
{
    std::fill(y.begin(), y.end(), NAN);
    emu::launch(dim3(capped(cdiv(s.outputs(), 256), 1048576, s.cap)), dim3(256), [&] {
        ct2_gather::conv_transpose2d_gather_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.I[1], s.I[2], s.CO,
                                                s.O(1), s.O(2), s.K[1], s.K[2], s.S[1], s.S[2], s.P[1], s.P[2],
                                                s.DL[1], s.DL[2]);
    });
}

using blocked3d_fn = void (*)(const float *, const float *, float *, int, int, int, int, int, int, int, int, int,
                              int, int, int, int, int, int, int, int, int, int, int, int, int);

/* level1/061, 068, 070, 073 and level2's: min(B*G*cdiv(CO/G, COB)*SD*SH*SW*cdiv(cdiv(OD, SD)*
 * cdiv(cdiv(OH, SH), 4)*cdiv(OW, SW), 128), 1048576) blocks of 128 */
void run_blocked3d(int cob, blocked3d_fn fn, const shape &s, const std::vector<float> &x,
                   const std::vector<float> &w, std::vector<float> &y)
{
    const long long n = (long long)s.B * s.G * cdiv(s.CO / s.G, cob) * s.S[0] * s.S[1] * s.S[2] *
                        cdiv(cdiv(s.O(0), s.S[0]) * cdiv(cdiv(s.O(1), s.S[1]), 4) * cdiv(s.O(2), s.S[2]), 128);
    std::fill(y.begin(), y.end(), NAN);
    emu::launch(dim3(capped(n, 1048576, s.cap)), dim3(128), [&] {
        fn(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.I[0], s.I[1], s.I[2], s.O(0), s.O(1), s.O(2), s.K[0],
           s.K[1], s.K[2], s.S[0], s.S[1], s.S[2], s.P[0], s.P[1], s.P[2], s.DL[0], s.DL[1], s.DL[2], s.G);
    });
}

/* level1/058 and 072: min(cdiv(B*CO*OD*OH*OW, 256), 65536) blocks of 256 */
void run_direct3d(const shape &s, const std::vector<float> &x, const std::vector<float> &w, std::vector<float> &y)
{
    std::fill(y.begin(), y.end(), NAN);
    emu::launch(dim3(capped(cdiv(s.outputs(), 256), 65536, s.cap)), dim3(256), [&] {
        ct3_direct::conv_transpose3d_direct_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.I[0], s.I[1],
                                                s.I[2], s.O(0), s.O(1), s.O(2), s.K[0], s.K[1], s.K[2], s.S[0],
                                                s.S[1], s.S[2], s.P[0], s.P[1], s.P[2], s.DL[0], s.DL[1], s.DL[2],
                                                s.G);
    });
}

int shapes2 = 0, shapes3 = 0;

void check(const shape &s, std::mt19937 &rng)
{
    if (!s.valid()) {
        fprintf(stderr, "%s: not a valid ConvTranspose shape\n", s.text().c_str());
        failures++;
        return;
    }
    const std::vector<float> x = normal<float>(rng, s.in_size()), w = normal<float>(rng, s.w_size());
    const expected e = scatter_loops(s, x, w);
    std::vector<float> y(s.outputs()), fast(s.outputs());
    if (s.dims == 2) {
        shapes2++;
        /* the copy whose KWF is KW (its fast path when the row's stride and dilation are 1), else KWF 3 */
        const blocked2d_variant *own = &blocked2d[0];
        for (const blocked2d_variant &v : blocked2d)
            if (v.kwf == s.K[2])
                own = &v;
        run_blocked2d(*own, s, x, w, fast);
        expect_close(own->name, s, fast, e);
        if (own->kwf == s.K[2] && s.S[2] == 1 && s.DL[2] == 1) { /* the general path too: another KWF */
            const blocked2d_variant &other = blocked2d[own == &blocked2d[0] ? 1 : 0];
            run_blocked2d(other, s, x, w, y);
            expect_same(other.name, s, y, fast);
        }
        run_direct2d(s, x, w, y);
        expect_close("conv_transpose2d_direct_ref.cuh", s, y, e);
        if (s.G == 1) {
            run_gather2d(s, x, w, y);
            expect_close("conv_transpose2d_gather_ref.cuh", s, y, e);
        }
    } else {
        shapes3++;
        run_blocked3d(16, ct3_cob16::conv_transpose3d_ref_cob16, s, x, w, y);
        expect_close("conv_transpose3d_ref.cuh (COB 16)", s, y, e);
        run_blocked3d(12, ct3_cob12::conv_transpose3d_ref_cob12, s, x, w, y);
        expect_close("conv_transpose3d_ref.cuh (COB 12)", s, y, e);
        run_direct3d(s, x, w, y);
        expect_close("conv_transpose3d_direct_ref.cuh", s, y, e);
    }
}

/* a drawn shape: 2-D (a fifth of them 1-D: H = KH = 1) or 3-D, small enough for the emulator */
shape draw(std::mt19937 &rng, int dims)
{
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (;;) {
        shape s{};
        s.dims = dims;
        s.G = pick(0, 2) ? 1 : pick(2, 4);
        s.B = pick(1, 3);
        s.CI = s.G * pick(1, 8);
        s.CO = s.G * (pick(0, 2) ? pick(1, 20) : pick(1, 4));
        s.cap = pick(0, 2) ? 0 : pick(1, 3);
        for (int a = 0; a < 3; a++) {
            s.I[a] = s.K[a] = s.S[a] = s.DL[a] = 1;
            s.P[a] = s.OP[a] = 0;
            if (a == 0 && dims == 2)
                continue;
            s.K[a] = pick(1, dims == 2 ? 5 : 4);
            s.S[a] = pick(1, 4);
            s.DL[a] = pick(0, 2) ? 1 : pick(2, 3);
            s.P[a] = pick(0, s.DL[a] * (s.K[a] - 1) + 1);
            s.OP[a] = pick(0, std::max(s.S[a], s.DL[a]) - 1);
            s.I[a] = dims == 2 ? (a == 1 ? pick(1, 8) : pick(1, 20)) : (a == 2 ? pick(1, 6) : pick(1, 4));
        }
        if (dims == 2 && pick(0, 4) == 0) /* 1-D, as level1/064 launches it */
            s.I[1] = s.K[1] = s.S[1] = s.DL[1] = 1, s.P[1] = s.OP[1] = 0;
        if (dims == 2 && pick(0, 2) == 0) { /* the blocked kernel's fast path */
            const int kwf[] = {3, 4, 5, 7};
            s.K[2] = kwf[pick(0, 3)], s.S[2] = s.DL[2] = 1, s.OP[2] = 0;
            s.P[2] = pick(0, s.K[2] - 1);
        }
        const long long work = s.outputs() * (s.CI / s.G) * s.K[0] * s.K[1] * s.K[2];
        if (s.valid() && s.outputs() <= 4000 && work <= 400000)
            return s;
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int draws = argc > 1 ? atoi(argv[1]) : 120;
    std::mt19937 rng(20261128);
    /* make2(B, CI, CO, G, H, W, KH, KW, SH, SW, PH, PW, OPH, OPW, DILH, DILW, grid cap) */
    const shape fixed[] = {
        make2(2, 3, 4, 1, 6, 7, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 0),   /* level1/057 small: KWF 3's fast path */
        make2(1, 30, 20, 1, 4, 13, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0), /* 2 weight chunks, 2 channel blocks */
        make2(1, 5, 7, 1, 8, 58, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1),  /* 1 block: staged weights kept over tiles */
        make2(1, 4, 20, 1, 3, 5, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1),  /* 1 block, 2 channel blocks: restaged */
        make2(1, 5, 7, 1, 1, 1, 1, 3, 1, 1, 0, 0, 0, 0, 1, 1, 0),   /* level1/064 alt: 1-D, L = 1 */
        make2(3, 4, 18, 2, 1, 23, 1, 3, 1, 3, 0, 1, 0, 2, 1, 1, 2), /* 1-D strided, output padding, groups */
        make2(2, 3, 4, 1, 5, 6, 3, 7, 1, 1, 0, 0, 0, 0, 1, 1, 0),   /* level1/065 small: KWF 7 */
        make2(2, 3, 4, 1, 5, 6, 3, 5, 1, 1, 0, 0, 0, 0, 1, 1, 0),   /* level1/069 small: KWF 5 */
        make2(1, 4, 8, 4, 5, 6, 3, 5, 2, 3, 1, 2, 0, 0, 2, 1, 0),   /* level1/075 small */
        make2(1, 2, 3, 1, 4, 5, 3, 3, 5, 5, 1, 1, 0, 0, 2, 2, 0),   /* level1/081 small: stride 5 > extent */
        make2(1, 2, 3, 1, 6, 10, 3, 7, 1, 1, 1, 3, 0, 0, 1, 1, 0),  /* level1/078 small */
        make2(1, 1, 1, 1, 1, 1, 3, 7, 1, 1, 1, 3, 0, 0, 1, 1, 0),   /* level1/078 alt: 1 x 1 */
        make2(2, 3, 8, 1, 5, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0),   /* level2/002 small */
        make2(2, 3, 8, 1, 5, 6, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0),   /* level2/005 small */
        make2(2, 6, 17, 1, 3, 9, 2, 4, 1, 1, 0, 2, 0, 0, 1, 1, 0),  /* KWF 4's fast path, 17 channels */
        make2(1, 3, 5, 1, 4, 5, 1, 1, 3, 3, 0, 0, 2, 2, 1, 1, 0),   /* 1 x 1 kernel, stride 3: zeros */
        make2(2, 6, 6, 6, 5, 7, 3, 3, 2, 1, 1, 1, 1, 0, 1, 2, 0),   /* depthwise */
        make2(1, 10, 5, 1, 3, 6, 3, 9, 1, 2, 1, 4, 0, 1, 1, 1, 0),  /* KW 9: 2 weight chunks, general path */
        /* 3-D: {B, CI, CO, G, in, K, S, P, OP, DIL, grid cap} */
        {3, 2, 3, 4, 1, {3, 4, 5}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 0}, /* level1/061 small */
        {3, 2, 3, 2, 1, {3, 4, 5}, {3, 5, 7}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 0}, /* 058 small */
        {3, 2, 5, 7, 1, {1, 2, 9}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {2, 2, 2}, 0}, /* 070-like, dilated */
        {3, 1, 4, 8, 4, {3, 4, 5}, {3, 5, 7}, {2, 2, 2}, {1, 2, 3}, {1, 1, 1}, {1, 1, 1}, 0}, /* level1/072 small */
        {3, 1, 3, 4, 1, {3, 4, 5}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 0}, /* level1/073 small */
        {3, 2, 3, 8, 1, {3, 4, 4}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0}, /* level2/003 small */
        {3, 1, 20, 18, 1, {2, 3, 3}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 0}, /* 2 weight chunks */
        {3, 1, 7, 5, 1, {2, 2, 3}, {5, 5, 5}, {1, 1, 1}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, 0}, /* 125 taps: 3 chunks */
        {3, 2, 4, 6, 2, {1, 3, 4}, {2, 1, 3}, {3, 4, 2}, {0, 0, 1}, {2, 3, 1}, {1, 1, 1}, 3}, /* strides > kernel */
        {3, 2, 3, 8, 1, {1, 2, 2}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1}, /* level2/038, 1 block */
        {3, 1, 3, 5, 1, {2, 3, 3}, {3, 3, 3}, {4, 2, 3}, {1, 0, 2}, {1, 1, 2}, {2, 2, 3}, 0}, /* stride, dilation */
    };
    for (const shape &s : fixed)
        check(s, rng);
    for (int i = 0; i < draws; i++)
        check(draw(rng, i % 2 ? 3 : 2), rng);
    if (failures) {
        fprintf(stderr, "emu_conv_transpose: %d check(s) failed\n", failures);
        return 1;
    }
    printf("emu_conv_transpose: conv_transpose2d_ref (KWF 3, 4, 5, 7; fast and general paths), "
           "conv_transpose2d_direct_ref, conv_transpose2d_gather_ref (G = 1), conv_transpose3d_ref (COB 16, 12) "
           "and conv_transpose3d_direct_ref agree with plain loops on %d 2-D and %d 3-D shapes (%lld outputs "
           "compared)\n",
           shapes2, shapes3, compared);
    return 0;
}

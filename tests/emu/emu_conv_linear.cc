// emu_conv_linear: the shared direct-convolution and linear kernels of problems/shared/ that
// emu_shared_refs.cc does not hold, run on the CPU by tests/emu/cuda_emu.h (headers prepared by
// tests/emu/prep.py, as tests/cli/test_ref_emulated.sh does), against plain loops in double over
// the same inputs:
//   conv1d_ref (conv1d_ref.cuh, COB 16 as level1/067 and 076 define it),
//   conv3d_ref of conv3d_blocked_ref.cuh and conv3d_ref of conv3d_direct_ref.cuh,
//   conv2d_ref of depthwise_conv2d_ref.cuh (depthwise, channel multipliers, any groups),
//   pointwise_ref (pointwise_ref.cuh) with PW_IN float (level1/087) and double (level1/086),
//   linear_ref (linear_ref.cuh).
// Each kernel runs on the grid of its references' `// @launch` lines and again on a smaller grid
// (its grid-stride loops over blocks and batch entries), on fixed shapes (the manifests' small
// and alt dims, scaled down where large) and drawn ones: channel counts off the 16-channel blocks
// and the 8-wide load groups, several weight chunks (the staged shared memory) and one channel a
// chunk, sizes 1 and off the 256-position and 64-wide tiles, groups, strides, padding, dilation.
// Every kernel documents exact products summed in double and rounded to float once, so each
// output must be within one float ulp of the loop's (the same sum in another order; with double
// input, pointwise_ref's fma and the loop's rounded products differ by a few double ulps, far
// below half a float ulp), and the smaller grid must give the same bits as the launch lines'.
// Outputs are NaN before each launch, so one never written fails. argv[1]: drawn shapes per
// kernel (default 20). Exit 0 and a summary line, or 1 naming the first outputs that differ.
#include "cuda_emu.h"
#include "emu_check.h"

/* The headers define macros they leave defined (and two define conv3d_ref, two COB ...): each is
 * included under its own kernel name and its macros undefined after it. */
#define COB 16 /* output channels per thread, as level1/067 and level1/076 define it */
#include "conv1d_ref.cuh"
#undef COB
#undef PT
#undef CU
#undef NT
#undef WQ

#define conv3d_ref conv3d_blocked_ref
#include "conv3d_blocked_ref.cuh"
#undef conv3d_ref

#define conv3d_ref conv3d_direct_ref
#include "conv3d_direct_ref.cuh"
#undef conv3d_ref

#define conv2d_ref depthwise_conv2d_ref
#include "depthwise_conv2d_ref.cuh"
#undef conv2d_ref

#define PW_IN float
#define pointwise_ref pointwise_ref_f32
#include "pointwise_ref.cuh"
#undef pointwise_ref
#undef PW_IN
#undef COB
#undef PT
#undef CU
#undef NT
#undef WC

#define PW_IN double
#define pointwise_ref pointwise_ref_f64
#include "pointwise_ref.cuh"
#undef pointwise_ref
#undef PW_IN
#undef COB
#undef PT
#undef CU
#undef NT
#undef WC

#include "linear_ref.cuh"

#include <cstdint>
#include <random>
#include <string>

namespace {

using emu_check::normal;
using emu_check::pick;
using emu_check::ulps;

long long cdiv(long long a, long long b) { return (a + b - 1) / b; }

/* a convolution of up to three spatial dims (conv1d: D = H = 1, the length is W; conv2d: D = 1;
 * pointwise: every kernel dim 1) */
struct conv_shape {
    int B, CI, CO, D, H, W, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW, G;
    int OD() const { return (D + 2 * PD - DD * (KD - 1) - 1) / SD + 1; }
    int OH() const { return (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1; }
    int OW() const { return (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1; }
    long long osp() const { return (long long)OD() * OH() * OW(); }
    long long outputs() const { return (long long)B * CO * osp(); }
    long long macs() const { return outputs() * (CI / G) * KD * KH * KW; }
    bool valid() const { return OD() >= 1 && OH() >= 1 && OW() >= 1 && CI % G == 0 && CO % G == 0; }
    std::string text() const
    {
        char s[240];
        snprintf(s, sizeof s, "B=%d CI=%d CO=%d in=%dx%dx%d K=%dx%dx%d S=%dx%dx%d P=%dx%dx%d D=%dx%dx%d G=%d", B,
                 CI, CO, D, H, W, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW, G);
        return s;
    }
};

/* a 1-D convolution: length L, kernel K, stride S, padding P, dilation DIL */
conv_shape shape1d(int B, int CI, int CO, int L, int K, int S, int P, int DIL, int G)
{
    return {B, CI, CO, 1, 1, L, 1, 1, K, 1, 1, S, 0, 0, P, 1, 1, DIL, G};
}
/* a 2-D convolution */
conv_shape shape2d(int B, int CI, int CO, int H, int W, int KH, int KW, int SH, int SW, int PH, int PW, int DH,
                   int DW, int G)
{
    return {B, CI, CO, 1, H, W, 1, KH, KW, 1, SH, SW, 0, PH, PW, 1, DH, DW, G};
}
/* a 3-D convolution with one kernel size, stride, padding, dilation for every dim */
conv_shape shape3d(int B, int CI, int CO, int D, int H, int W, int KD, int KH, int KW, int S, int P, int DIL, int G)
{
    return {B, CI, CO, D, H, W, KD, KH, KW, S, S, S, P, P, P, DIL, DIL, DIL, G};
}

int failures = 0, compared = 0, shapes = 0;

void expect_close(const std::string &kernel, const std::string &shape, const std::vector<float> &got,
                  const std::vector<float> &want, long long max_ulps)
{
    for (size_t i = 0; i < want.size(); i++) {
        compared++;
        if (std::isfinite(got[i]) && std::isfinite(want[i]) && ulps(got[i], want[i]) <= max_ulps)
            continue;
        if (failures++ < 5)
            fprintf(stderr, "%s, %s: output %zu is %.9g, expected %.9g\n", kernel.c_str(), shape.c_str(), i,
                    got[i], want[i]);
        return;
    }
}


/* a grid dim below `full` (1 when full is 1): the kernel's grid-stride loop takes the rest */
unsigned fewer(std::mt19937 &rng, long long full, int most)
{
    return full <= 1 ? 1u : (unsigned)pick(rng, 1, (int)std::min<long long>(full - 1, most));
}

std::string grid_text(const dim3 &g)
{
    char s[64];
    snprintf(s, sizeof s, " grid %ux%u", g.x, g.y);
    return s;
}

/* y[b, co, od, oh, ow] = sum over c < CI/G and (kd, kh, kw) of
 * x[b, g*(CI/G) + c, od*SD - PD + kd*DD, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW] * w[co, c, kd, kh, kw],
 * g = co / (CO/G), positions outside the input zero; in double, rounded to float once */
template <class X>
std::vector<float> conv_loops(const conv_shape &s, const std::vector<X> &x, const std::vector<float> &w)
{
    if (!s.valid()) { /* a fixed shape with no output or groups that do not divide the channels */
        fprintf(stderr, "emu_conv_linear: %s is not a valid convolution\n", s.text().c_str());
        exit(1);
    }
    const int OD = s.OD(), OH = s.OH(), OW = s.OW(), cig = s.CI / s.G, cog = s.CO / s.G;
    std::vector<float> y((size_t)s.outputs());
    size_t at = 0;
    for (int b = 0; b < s.B; b++)
        for (int co = 0; co < s.CO; co++)
            for (int od = 0; od < OD; od++)
                for (int oh = 0; oh < OH; oh++)
                    for (int ow = 0; ow < OW; ow++) {
                        const int g = co / cog;
                        double sum = 0;
                        for (int c = 0; c < cig; c++)
                            for (int kd = 0; kd < s.KD; kd++)
                                for (int kh = 0; kh < s.KH; kh++)
                                    for (int kw = 0; kw < s.KW; kw++) {
                                        const int id = od * s.SD - s.PD + kd * s.DD, ih = oh * s.SH - s.PH + kh * s.DH,
                                                  iw = ow * s.SW - s.PW + kw * s.DW;
                                        if (id < 0 || id >= s.D || ih < 0 || ih >= s.H || iw < 0 || iw >= s.W)
                                            continue;
                                        const size_t xi =
                                            ((((size_t)b * s.CI + g * cig + c) * s.D + id) * s.H + ih) * s.W + iw;
                                        const size_t wi =
                                            ((((size_t)co * cig + c) * s.KD + kd) * s.KH + kh) * s.KW + kw;
                                        sum += (double)x[xi] * (double)w[wi];
                                    }
                        y[at++] = (float)sum;
                    }
    return y;
}

/* Runs `launch(grid, y)` on the launch lines' grid, checks it against the loops, then on a smaller
 * grid, which must give the same bits. */
template <class Launch>
void check_grids(const char *kernel, const std::string &shape_text, dim3 full, dim3 small,
                 const std::vector<float> &want, Launch launch)
{
    std::vector<float> got(want.size()), again(want.size());
    std::fill(got.begin(), got.end(), NAN);
    launch(full, got);
    expect_close(kernel, shape_text + grid_text(full), got, want, 1);
    std::fill(again.begin(), again.end(), NAN);
    launch(small, again);
    expect_close(std::string(kernel) + " (smaller grid, against the launch lines' grid)", shape_text + grid_text(small),
                 again, got, 0);
    shapes++;
}

void check_conv1d(const conv_shape &s, std::mt19937 &rng)
{
    const std::vector<float> x = normal<float>(rng, (size_t)s.B * s.CI * s.W);
    const std::vector<float> w = normal<float>(rng, (size_t)s.CO * (s.CI / s.G) * s.KW);
    const int OL = s.OW();
    /* level1/067: dim3(min(cdiv(OL, 256) * G * cdiv(CO / G, 16), 2147483647), min(B, 65535)), 128 */
    const long long gx = std::min(cdiv(OL, 256) * s.G * cdiv(s.CO / s.G, 16), 2147483647LL);
    const dim3 full((unsigned)gx, (unsigned)std::min(s.B, 65535)), small(fewer(rng, gx, 3), fewer(rng, s.B, 2));
    check_grids("conv1d_ref", s.text(), full, small, conv_loops(s, x, w), [&](dim3 grid, std::vector<float> &y) {
        emu::launch(grid, dim3(128), [&] {
            conv1d_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.W, OL, s.KW, s.SW, s.PW, s.DW, s.G);
        });
    });
}

void check_conv3d_blocked(const conv_shape &s, std::mt19937 &rng)
{
    const std::vector<float> x = normal<float>(rng, (size_t)s.B * s.CI * s.D * s.H * s.W);
    const std::vector<float> w = normal<float>(rng, (size_t)s.CO * (s.CI / s.G) * s.KD * s.KH * s.KW);
    /* level1/060: dim3(min(cdiv(OD*OH*OW, 256) * G * cdiv(CO / G, 16), 2147483647), min(B, 65535)), 128 */
    const long long gx = std::min(cdiv(s.osp(), 256) * s.G * cdiv(s.CO / s.G, 16), 2147483647LL);
    const dim3 full((unsigned)gx, (unsigned)std::min(s.B, 65535)), small(fewer(rng, gx, 3), fewer(rng, s.B, 2));
    check_grids("conv3d_ref (conv3d_blocked_ref.cuh)", s.text(), full, small, conv_loops(s, x, w),
                [&](dim3 grid, std::vector<float> &y) {
                    emu::launch(grid, dim3(128), [&] {
                        conv3d_blocked_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.D, s.H, s.W, s.OD(), s.OH(),
                                           s.OW(), s.KD, s.KH, s.KW, s.SD, s.SH, s.SW, s.PD, s.PH, s.PW, s.DD, s.DH,
                                           s.DW, s.G);
                    });
                });
}

void check_conv3d_direct(const conv_shape &s, std::mt19937 &rng)
{
    const std::vector<float> x = normal<float>(rng, (size_t)s.B * s.CI * s.D * s.H * s.W);
    const std::vector<float> w = normal<float>(rng, (size_t)s.CO * (s.CI / s.G) * s.KD * s.KH * s.KW);
    /* level1/066: min(cdiv(B*CO*OD*OH*OW, 256), 65536), 256 */
    const long long gx = std::min(cdiv(s.outputs(), 256), 65536LL);
    check_grids("conv3d_ref (conv3d_direct_ref.cuh)", s.text(), dim3((unsigned)gx), dim3(fewer(rng, gx, 3)),
                conv_loops(s, x, w), [&](dim3 grid, std::vector<float> &y) {
                    emu::launch(grid, dim3(256), [&] {
                        conv3d_direct_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.D, s.H, s.W, s.OD(), s.OH(),
                                          s.OW(), s.KD, s.KH, s.KW, s.SD, s.SH, s.SW, s.PD, s.PH, s.PW, s.DD, s.DH,
                                          s.DW, s.G);
                    });
                });
}

void check_depthwise(const conv_shape &s, std::mt19937 &rng)
{
    const std::vector<float> x = normal<float>(rng, (size_t)s.B * s.CI * s.H * s.W);
    const std::vector<float> w = normal<float>(rng, (size_t)s.CO * (s.CI / s.G) * s.KH * s.KW);
    /* level1/085: min(cdiv(B*C*OH*OW, 256), 1048576), 256 (CO for C in level1/084's) */
    const long long gx = std::min(cdiv(s.outputs(), 256), 1048576LL);
    check_grids("conv2d_ref (depthwise_conv2d_ref.cuh)", s.text(), dim3((unsigned)gx), dim3(fewer(rng, gx, 3)),
                conv_loops(s, x, w), [&](dim3 grid, std::vector<float> &y) {
                    emu::launch(grid, dim3(256), [&] {
                        depthwise_conv2d_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.H, s.W, s.CO, s.OH(), s.OW(),
                                             s.KH, s.KW, s.SH, s.SW, s.PH, s.PW, s.DH, s.DW, s.G);
                    });
                });
}

/* pointwise_ref with PW_IN = X: the shape's W is H*W, every kernel dim 1 */
template <class X> void check_pointwise(const conv_shape &s, std::mt19937 &rng)
{
    const std::vector<X> x = normal<X>(rng, (size_t)s.B * s.CI * s.W);
    const std::vector<float> w = normal<float>(rng, (size_t)s.CO * s.CI);
    const long long HW = s.W;
    /* level1/087: dim3(min(cdiv(H*W, 256) * cdiv(CO, 16), 2147483647), min(B, 65535)), 128 */
    const long long gx = std::min(cdiv(HW, 256) * cdiv(s.CO, 16), 2147483647LL);
    const dim3 full((unsigned)gx, (unsigned)std::min(s.B, 65535)), small(fewer(rng, gx, 3), fewer(rng, s.B, 2));
    char text[100];
    snprintf(text, sizeof text, "B=%d CI=%d CO=%d HW=%lld", s.B, s.CI, s.CO, HW);
    check_grids(sizeof(X) == 4 ? "pointwise_ref (PW_IN float)" : "pointwise_ref (PW_IN double)", text, full,
                small, conv_loops(s, x, w), [&](dim3 grid, std::vector<float> &y) {
                    emu::launch(grid, dim3(128), [&] {
                        if constexpr (sizeof(X) == 4)
                            pointwise_ref_f32(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, HW);
                        else
                            pointwise_ref_f64(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, HW);
                    });
                });
}

conv_shape pointwise_shape(int B, int CI, int CO, int HW) { return shape1d(B, CI, CO, HW, 1, 1, 0, 1, 1); }

void check_linear(long long M, long long N, long long K, std::mt19937 &rng)
{
    const std::vector<float> x = normal<float>(rng, M * K), w = normal<float>(rng, N * K);
    std::vector<float> want(M * N);
    for (long long m = 0; m < M; m++)
        for (long long n = 0; n < N; n++) {
            double sum = 0;
            for (long long k = 0; k < K; k++)
                sum += (double)x[m * K + k] * (double)w[n * K + k];
            want[m * N + n] = (float)sum;
        }
    /* level2/009: dim3(min(cdiv(OUT, 64), 65535), min(cdiv(B, 64), 65535)), 256 */
    const long long gx = std::min(cdiv(N, 64), 65535LL), gy = std::min(cdiv(M, 64), 65535LL);
    char text[100];
    snprintf(text, sizeof text, "M=%lld N=%lld K=%lld", M, N, K);
    check_grids("linear_ref", text, dim3((unsigned)gx, (unsigned)gy),
                dim3(fewer(rng, gx, 2), fewer(rng, gy, 2)), want, [&](dim3 grid, std::vector<float> &y) {
                    emu::launch(grid, dim3(256), [&] { linear_ref(x.data(), w.data(), y.data(), M, N, K); });
                });
}

/* drawn shapes: each within a work budget, so the whole program stays fast under ASan */
conv_shape draw_conv1d(std::mt19937 &rng)
{
    for (;;) {
        const int G = pick(rng, 1, 3);
        const int cig = pick(rng, 0, 3) == 0 ? pick(rng, 100, 150) : pick(rng, 1, 12); /* 2 chunks at K 3 */
        const int K = pick(rng, 0, 4) == 0 ? pick(rng, 30, 180) : pick(rng, 1, 9);     /* cc = 320 / K small */
        const conv_shape s = shape1d(pick(rng, 1, 3), G * cig, G * pick(rng, 1, 37), pick(rng, 1, 700), K,
                                     pick(rng, 1, 3), pick(rng, 0, 3), pick(rng, 1, 4), G);
        if (s.valid() && s.macs() <= 1500000 && s.outputs() <= 40000)
            return s;
    }
}

conv_shape draw_conv3d(std::mt19937 &rng, bool blocked)
{
    for (;;) {
        const int G = pick(rng, 1, 3);
        const int cig = blocked && pick(rng, 0, 3) == 0 ? pick(rng, 12, 24) : pick(rng, 1, 5);
        conv_shape s{pick(rng, 1, 2), G * cig, G * pick(rng, 1, pick(rng, 0, 2) ? 20 : 40), pick(rng, 1, 6),
                     pick(rng, 1, 10), pick(rng, 1, 24), pick(rng, 1, 3), pick(rng, 1, 3), pick(rng, 1, 11),
                     pick(rng, 1, 2), pick(rng, 1, 2), pick(rng, 1, 2), pick(rng, 0, 2), pick(rng, 0, 2),
                     pick(rng, 0, 2), pick(rng, 1, 2), pick(rng, 1, 2), pick(rng, 1, 2), G};
        if (s.valid() && s.macs() <= 1500000 && s.outputs() <= 25000)
            return s;
    }
}

conv_shape draw_depthwise(std::mt19937 &rng)
{
    for (;;) {
        int G, CI, CO;
        if (pick(rng, 0, 3)) { /* depthwise: groups = channels, a channel multiplier of 1 to 3 */
            G = CI = pick(rng, 1, 12);
            CO = CI * pick(rng, 1, 3);
        } else {
            G = pick(rng, 1, 3);
            CI = G * pick(rng, 1, 4), CO = G * pick(rng, 1, 5);
        }
        const conv_shape s = shape2d(pick(rng, 1, 3), CI, CO, pick(rng, 1, 30), pick(rng, 1, 40), pick(rng, 1, 7),
                                     pick(rng, 1, 7), pick(rng, 1, 3), pick(rng, 1, 3), pick(rng, 0, 3),
                                     pick(rng, 0, 3), pick(rng, 1, 3), pick(rng, 1, 3), G);
        if (s.valid() && s.outputs() <= 25000)
            return s;
    }
}

conv_shape draw_pointwise(std::mt19937 &rng)
{
    for (;;) {
        const conv_shape s = pointwise_shape(pick(rng, 1, 3), pick(rng, 0, 4) == 0 ? pick(rng, 250, 300) : pick(rng, 1, 40),
                                             pick(rng, 1, 40), pick(rng, 1, 700));
        if (s.macs() <= 1500000)
            return s;
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int draws = argc > 1 ? atoi(argv[1]) : 20;
    std::mt19937 rng(20261203);

    /* conv1d_ref: level1/067's small and alt dims (L 3: one output), level1/076's (stride 3,
     * dilation 4; L 9: one output), three weight chunks (CI/G 213 at K 3: 106 + 106 + 1), one
     * channel a chunk (K 200), depthwise groups with padding and dilation, one output channel */
    for (const conv_shape &s :
         {shape1d(2, 3, 4, 100, 3, 1, 0, 1, 1), shape1d(1, 5, 7, 3, 3, 1, 0, 1, 1), shape1d(2, 3, 4, 50, 3, 3, 0, 4, 1),
          shape1d(2, 1, 1, 9, 3, 3, 0, 4, 1), shape1d(1, 213, 20, 40, 3, 1, 1, 1, 1),
          shape1d(1, 3, 17, 400, 200, 2, 5, 1, 1), shape1d(2, 12, 12, 517, 5, 1, 2, 2, 12),
          shape1d(3, 64, 33, 257, 3, 1, 0, 1, 1)})
        check_conv1d(s, rng);
    for (int i = 0; i < draws; i++)
        check_conv1d(draw_conv1d(rng), rng);

    /* conv3d_blocked_ref: level1/060's small and alt dims (kernel 3x5x7), level2/047's alt, three
     * weight chunks (CI 25 at 27 taps: 11 + 11 + 3), one channel a chunk (175 taps), 40 output
     * channels in 3 groups (partial blocks), strides, padding and dilation per dim, KW 11 (two
     * 8-wide column groups) */
    const conv_shape mixed = {2, 6, 9, 7, 8, 13, 2, 3, 3, 2, 1, 2, 1, 0, 2, 2, 1, 1, 3};
    for (const conv_shape &s :
         {shape3d(2, 3, 4, 5, 7, 9, 3, 5, 7, 1, 0, 1, 1), shape3d(2, 5, 7, 3, 5, 101, 3, 5, 7, 1, 0, 1, 1),
          shape3d(3, 5, 7, 9, 13, 11, 3, 3, 3, 1, 0, 1, 1), shape3d(1, 25, 18, 4, 5, 6, 3, 3, 3, 1, 1, 1, 1),
          shape3d(1, 3, 17, 5, 5, 8, 5, 5, 7, 1, 0, 1, 1), shape3d(1, 6, 42, 4, 6, 9, 2, 2, 2, 1, 1, 2, 3), mixed,
          shape3d(1, 2, 3, 3, 4, 30, 1, 2, 11, 2, 3, 1, 1)})
        check_conv3d_blocked(s, rng);
    for (int i = 0; i < draws; i++)
        check_conv3d_blocked(draw_conv3d(rng, true), rng);

    /* conv3d_direct_ref: level1/054's small and alt dims, level1/059's (kernel K x K x 1 on an
     * H x W x D input), per-dim strides, padding and dilation with groups */
    for (const conv_shape &s :
         {shape3d(2, 3, 4, 5, 6, 7, 3, 3, 3, 1, 0, 1, 1), shape3d(1, 5, 7, 3, 9, 131, 3, 3, 3, 1, 0, 1, 1),
          shape3d(2, 3, 5, 11, 9, 4, 3, 3, 1, 2, 1, 2, 1), mixed, shape3d(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1)})
        check_conv3d_direct(s, rng);
    for (int i = 0; i < draws; i++)
        check_conv3d_direct(draw_conv3d(rng, false), rng);

    /* depthwise conv2d_ref: level1/082's small and alt dims (3x3 maps: one output), level1/083's
     * K x 1 kernel with dilation, level1/085's asymmetric everything, level1/084's channel
     * multiplier (CO = 3 CI, groups CI), ordinary groups */
    for (const conv_shape &s :
         {shape2d(2, 3, 3, 10, 12, 3, 3, 1, 1, 0, 0, 1, 1, 3), shape2d(1, 64, 64, 3, 3, 3, 3, 1, 1, 0, 0, 1, 1, 64),
          shape2d(2, 7, 7, 67, 31, 3, 1, 2, 2, 1, 1, 2, 2, 7), shape2d(2, 5, 5, 17, 23, 3, 5, 2, 1, 1, 2, 1, 2, 5),
          shape2d(2, 4, 12, 13, 19, 3, 3, 1, 1, 1, 1, 1, 1, 4), shape2d(1, 6, 4, 9, 11, 3, 2, 1, 2, 1, 0, 1, 1, 2)})
        check_depthwise(s, rng);
    for (int i = 0; i < draws; i++)
        check_depthwise(draw_depthwise(rng), rng);

    /* pointwise_ref, float input (level1/087) and double (level1/086's depthwise intermediate):
     * the small and alt dims (one pixel with 128 output channels; 33 x 41 pixels), two weight
     * chunks (CI 300: 256 + 44), one channel */
    const conv_shape pw_fixed[] = {pointwise_shape(2, 3, 4, 120), pointwise_shape(1, 64, 128, 1),
                                   pointwise_shape(3, 5, 7, 33 * 41), pointwise_shape(1, 300, 20, 257),
                                   pointwise_shape(2, 1, 1, 513)};
    for (const conv_shape &s : pw_fixed)
        check_pointwise<float>(s, rng), check_pointwise<double>(s, rng);
    for (int i = 0; i < draws; i++) {
        const conv_shape s = draw_pointwise(rng);
        check_pointwise<float>(s, rng), check_pointwise<double>(s, rng);
    }

    /* linear_ref: level2/009's small and alt dims, 1 x 1 x 1, whole tiles, rows and columns just
     * over a tile with K a multiple of the 16-wide slice, a single row */
    for (auto [M, N, K] : {std::tuple{4LL, 24LL, 40LL}, {5, 131, 257}, {1, 1, 1}, {64, 64, 64}, {130, 65, 16}, {1, 200, 77},
                           {129, 3, 17}})
        check_linear(M, N, K, rng);
    for (int i = 0; i < draws; i++)
        check_linear(pick(rng, 1, 150), pick(rng, 1, 150), pick(rng, 0, 3) ? pick(rng, 1, 80) : 16 * pick(rng, 1, 4),
                     rng);

    if (failures) {
        fprintf(stderr, "emu_conv_linear: %d check(s) failed\n", failures);
        return 1;
    }
    printf("emu_conv_linear: conv1d_ref, conv3d_ref (blocked and direct), depthwise conv2d_ref, pointwise_ref "
           "(float and double input) and linear_ref agree with plain loops on %d shapes, each on two grids "
           "(%d outputs compared, both grids counted)\n",
           shapes, compared);
    return 0;
}

// emu_shared_refs: the shared convolution and matrix-product kernels of problems/shared/, run on
// the CPU by tests/emu/cuda_emu.h (tests/cli/test_ref_emulated.sh prepares the headers with
// tests/emu/prep.py and builds this file), against plain loops in double over the same float
// inputs. Each output must be within one float ulp of the loop's (the kernels sum the same
// exact products in double, in another order, and round once):
//   matmul_ref (the emulator's MMA layout: a wrong one fails here first, on a kernel the GPU has
//   verified since the first sessions);
//   conv2d_ref, conv2d_ref_split with conv2d_split_sum at several split counts (equal to
//   conv2d_ref bit for bit when KS is 1), and conv2d_gemm_ref, over drawn shapes: groups,
//   strides, padding, dilation, channel counts off every chunk and tile size, maps smaller and
//   larger than a tile, grids smaller than the tile count (the grid-stride loop).
// Exit 0 and a summary line, or 1 naming the first shape and output that differ.
#include "cuda_emu.h"
#include "emu_check.h"

#define CC_EMU 4 /* conv2d_ref's input channels per chunk (its header undefines CC) */
#define CC CC_EMU
#define CONV2D_SPLIT
#include "conv2d_ref.cuh"
#include "matmul_tiled_ref.cuh"
#include "conv2d_gemm_ref.cuh"

#include <cstdint>
#include <random>
#include <string>

namespace {

using emu_check::normal;
using emu_check::ulps;

struct conv_shape {
    int B, CI, CO, H, W, KH, KW, SH, SW, PH, PW, DH, DW, G;
    int OH() const { return (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1; }
    int OW() const { return (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1; }
    /* conv2d_ref's dynamic shared memory, as its header and the launch lines compute it */
    long long smem_bytes() const
    {
        const long long XR = (4 * 2 - 1) * SH + (KH - 1) * DH + 1, XC = (32 * 2 - 1) * SW + (KW - 1) * DW + 1;
        return 12 * (CC_EMU * KH * KW * 16 + CC_EMU * XR * XC);
    }
    std::string text() const
    {
        char s[200];
        snprintf(s, sizeof s, "B=%d CI=%d CO=%d H=%d W=%d K=%dx%d S=%dx%d P=%dx%d D=%dx%d G=%d", B, CI,
                 CO, H, W, KH, KW, SH, SW, PH, PW, DH, DW, G);
        return s;
    }
};

int failures = 0, compared = 0;

void expect_close(const char *kernel, const std::string &shape, const std::vector<float> &got,
                  const std::vector<float> &want, long long max_ulps)
{
    for (size_t i = 0; i < want.size(); i++) {
        compared++;
        if (std::isfinite(got[i]) && ulps(got[i], want[i]) <= max_ulps)
            continue;
        if (failures++ < 5)
            fprintf(stderr, "%s, %s: output %zu is %.9g, expected %.9g\n", kernel, shape.c_str(), i,
                    got[i], want[i]);
        return;
    }
}

std::vector<float> conv_loops(const conv_shape &s, const std::vector<float> &x, const std::vector<float> &w)
{
    const int OH = s.OH(), OW = s.OW(), cig = s.CI / s.G, cog = s.CO / s.G;
    std::vector<float> y((size_t)s.B * s.CO * OH * OW);
    for (int b = 0; b < s.B; b++)
        for (int co = 0; co < s.CO; co++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    const int g = co / cog;
                    double sum = 0;
                    for (int c = 0; c < cig; c++)
                        for (int kh = 0; kh < s.KH; kh++)
                            for (int kw = 0; kw < s.KW; kw++) {
                                const int ih = oh * s.SH - s.PH + kh * s.DH, iw = ow * s.SW - s.PW + kw * s.DW;
                                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W)
                                    continue;
                                sum += (double)x[(((size_t)b * s.CI + g * cig + c) * s.H + ih) * s.W + iw] *
                                       (double)w[(((size_t)co * cig + c) * s.KH + kh) * s.KW + kw];
                            }
                    y[(((size_t)b * s.CO + co) * OH + oh) * OW + ow] = (float)sum;
                }
    return y;
}

/* conv2d_ref's grid covers ntiles in as few as `blocks` blocks; its dynamic shared memory as the
 * launch lines compute it */
void run_conv2d_ref(const conv_shape &s, const std::vector<float> &x, const std::vector<float> &w,
                    std::vector<float> &y, int blocks)
{
    std::fill(y.begin(), y.end(), NAN);
    emu::launch(dim3(blocks), dim3(128), [&] {
        conv2d_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.H, s.W, s.OH(), s.OW(), s.KH, s.KW,
                   s.SH, s.SW, s.PH, s.PW, s.DH, s.DW, s.G);
    });
}

void run_conv2d_split(const conv_shape &s, const std::vector<float> &x, const std::vector<float> &w,
                      std::vector<float> &y, int blocks, int KS)
{
    std::fill(y.begin(), y.end(), NAN);
    std::vector<double> part((size_t)KS * y.size(), NAN);
    emu::launch(dim3(blocks), dim3(128), [&] {
        conv2d_ref_split(x.data(), w.data(), y.data(), part.data(), s.B, s.CI, s.CO, s.H, s.W, s.OH(),
                         s.OW(), s.KH, s.KW, s.SH, s.SW, s.PH, s.PW, s.DH, s.DW, s.G, KS);
    });
    emu::launch(dim3(3), dim3(64), [&] { conv2d_split_sum(part.data(), y.data(), (long long)y.size(), KS); });
}

void run_conv2d_gemm(const conv_shape &s, const std::vector<float> &x, const std::vector<float> &w,
                     std::vector<float> &y)
{
    std::fill(y.begin(), y.end(), NAN);
    const long long M = (long long)s.B * s.OH() * s.OW();
    emu::launch(dim3((unsigned)((M + 63) / 64), (unsigned)((s.CO / s.G + 63) / 64), s.G), dim3(16, 16), [&] {
        conv2d_gemm_ref(x.data(), w.data(), y.data(), s.B, s.CI, s.CO, s.H, s.W, s.OH(), s.OW(), s.KH,
                        s.KW, s.SH, s.SW, s.PH, s.PW, s.DH, s.DW, s.G);
    });
}

conv_shape draw_shape(std::mt19937 &rng)
{
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (;;) {
        conv_shape s;
        s.G = pick(1, 3);
        s.B = pick(1, 3);
        s.CI = s.G * pick(1, 11);
        s.CO = s.G * pick(1, 37);
        s.KH = pick(1, 5), s.KW = pick(1, 5);
        s.SH = pick(1, 3), s.SW = pick(1, 3);
        s.DH = pick(1, 2), s.DW = pick(1, 2);
        s.PH = pick(0, 2), s.PW = pick(0, 2);
        s.H = pick(1, 21), s.W = pick(1, 70);
        if (s.OH() >= 1 && s.OW() >= 1 && s.PH < s.DH * (s.KH - 1) + 1 && s.PW < s.DW * (s.KW - 1) + 1 &&
            s.smem_bytes() <= (long long)sizeof emu_dynamic_smem)
            return s;
    }
}

void check_conv(const conv_shape &s, std::mt19937 &rng)
{
    if (s.smem_bytes() > (long long)sizeof emu_dynamic_smem) { /* the GPU could not launch it either */
        fprintf(stderr, "%s: needs %lld bytes of shared memory, over the %zu of a block\n", s.text().c_str(),
                s.smem_bytes(), sizeof emu_dynamic_smem);
        failures++;
        return;
    }
    const std::vector<float> x = normal<float>(rng, (size_t)s.B * s.CI * s.H * s.W);
    const std::vector<float> w = normal<float>(rng, (size_t)s.CO * (s.CI / s.G) * s.KH * s.KW);
    const std::vector<float> want = conv_loops(s, x, w);
    std::vector<float> ref(want.size()), got(want.size());
    const int tiles = s.B * s.G * ((s.CO / s.G + 15) / 16) * ((s.OW() + 63) / 64) * ((s.OH() + 7) / 8);
    run_conv2d_ref(s, x, w, ref, std::min(tiles, 3));
    expect_close("conv2d_ref", s.text(), ref, want, 1);
    for (int KS : {1, 2, 3, 7, 16}) {
        run_conv2d_split(s, x, w, got, std::min(tiles * KS, 5), KS);
        expect_close(KS == 1 ? "conv2d_ref_split KS=1 (against conv2d_ref)" : "conv2d_ref_split", s.text(), got,
                     KS == 1 ? ref : want, KS == 1 ? 0 : 1);
    }
    run_conv2d_gemm(s, x, w, got);
    expect_close("conv2d_gemm_ref", s.text(), got, want, 1);
}

void check_matmul(long long rows, long long cols, long long inner, std::mt19937 &rng)
{
    const std::vector<float> A = normal<float>(rng, rows * inner), B = normal<float>(rng, inner * cols);
    std::vector<float> want(rows * cols), got(rows * cols, NAN);
    for (long long r = 0; r < rows; r++)
        for (long long c = 0; c < cols; c++) {
            double sum = 0;
            for (long long k = 0; k < inner; k++)
                sum += (double)A[r * inner + k] * (double)B[k * cols + c];
            want[r * cols + c] = (float)sum;
        }
    emu::launch(dim3((unsigned)((rows + 63) / 64), (unsigned)((cols + 63) / 64)), dim3(16, 16),
                [&] { matmul_ref(A.data(), B.data(), got.data(), rows, cols, inner); });
    char shape[80];
    snprintf(shape, sizeof shape, "%lldx%lld by %lldx%lld", rows, inner, inner, cols);
    expect_close("matmul_ref", shape, got, want, 1);
}

} // namespace

int main(int argc, char **argv)
{
    const int draws = argc > 1 ? atoi(argv[1]) : 40;
    std::mt19937 rng(20261127);
    for (auto [r, c, k] : {std::tuple{64, 64, 32}, {70, 90, 37}, {1, 1, 1}, {130, 5, 100}, {3, 129, 64}})
        check_matmul(r, c, k, rng);
    /* fixed shapes first: DenseNet's 1x1 and 3x3 on a 7x7 map with many channels, an 11 x 5
     * filter of stride 4 down the rows (AlexNet's first layer, within CC 4's shared memory), a
     * depthwise convolution */
    const conv_shape fixed[] = {
        {2, 67, 32, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1},  {2, 70, 20, 7, 7, 1, 1, 1, 1, 0, 0, 1, 1, 1},
        {1, 3, 24, 35, 23, 11, 5, 4, 1, 2, 2, 1, 1, 1}, {2, 12, 12, 9, 13, 3, 3, 2, 2, 1, 1, 1, 1, 12},
    };
    for (const conv_shape &s : fixed)
        check_conv(s, rng);
    for (int i = 0; i < draws; i++)
        check_conv(draw_shape(rng), rng);
    if (failures) {
        fprintf(stderr, "emu_shared_refs: %d check(s) failed\n", failures);
        return 1;
    }
    printf("emu_shared_refs: matmul_ref, conv2d_ref, conv2d_ref_split (KS 1-16) and conv2d_gemm_ref agree "
           "with plain loops on %d convolution shapes (%d outputs compared)\n",
           (int)(sizeof fixed / sizeof fixed[0]) + draws, compared);
    return 0;
}

// emu_l3_ops: the level-3 layer kernels of problems/shared/l3_ops.cuh and the attention and
// transformer kernels of problems/shared/l3_attn.cuh, run on the CPU by tests/emu/cuda_emu.h
// (headers prepared by tests/emu/prep.py, as tests/cli/test_ref_emulated.sh does; included in the
// order of the references that use them: l3_ops.cuh, matmul_tiled_ref.cuh, l3_attn.cuh), against
// plain loops in double over the same inputs. Every kernel of the two headers is checked:
//   l3_ops.cuh: l3_bn_stats, l3_bn_apply, l3_copy_channels, l3_bias_act_f, l3_bias_act_d (every
//   activation code, bias and residual present or absent, NaN inputs), l3_maxpool2d (NaN in a
//   window), l3_softmax_rows (rows whose exp overflows without the max subtracted),
//   l3_row_mean, l3_channel_shuffle, l3_avgpool2d, l3_copy, l3_slice_channels, l3_upconv2x2,
//   l3_copy_rows, l3_vlad, l3_vlad_normalize (a zero column: the 1e-12 floor);
//   l3_attn.cuh: l3_layernorm, l3_swin_v2_attn, l3_swin_spatial, l3_swin_cpb, l3_qkv_bias,
//   l3_transpose, l3_patch_merge, l3_split_heads, l3_merge_heads, l3_causal_rows (kinds 0, 1,
//   2), l3_bmm_nt (also at z = 0 and rs = 1, which is exactly the references' own l3_linear_nt:
//   mm_tile<true> of float operands into double), l3_bmm_nn_d, l3_vit_patches, l3_vit_embed,
//   l3_broadcast_rows; and minGPT's causal attention chained as references 043/044/050 launch it.
// Each kernel runs with the block size, grid formula and dynamic shared memory of its `// @launch`
// lines in problems/level3/*.cu, then again on a smaller grid where that formula gives several
// blocks (the grid-stride loops over elements, rows, channels and batch entries), which must give
// the same bits. Shapes: fixed ones (sizes 1, rows shorter and longer than a warp, counts off the
// 256-thread blocks and the 64-wide tiles), then argv[1] drawn rounds (default 6) that draw one
// shape per kernel (std::mt19937, fixed seed). Outputs are filled with a NaN of a payload no
// kernel makes before each launch: an output never written fails, and so does a write to an
// element a kernel must leave alone (the other channels of a concatenation, the gaps of a strided
// row), which must still hold that NaN.
// Tolerances. The headers compute in double and round to float once, so a float output must be
// within one float ulp of the loop's double value rounded to float (the same terms summed in
// another order, or the same formula written otherwise: x / sqrt(2) for x * 0.7071..., a division
// for a multiplication by a reciprocal, erfc for 1 + erf), or within 1e-13 of it in absolute
// terms: inputs here are O(1) to O(100), so summation order and those rewritings move the double
// value by at most ~1e-14 absolute, which exceeds half an ulp only for outputs under ~1e-7 that
// come out of cancellation (1 + erf(x) for x < -4 in GELU, 1 + tanh in GELU_TANH, a batch-norm or
// layer-norm output near zero); any index or formula error moves outputs by O(1). The
// transcendentals (exp, tanh, erf, log2, sqrt) are the host's libm in the kernels and in the loops
// alike, so they add nothing here (on the GPU they are CUDA's, within 2 double ulps). Pure moves
// (copies, slices, shuffles, transposes, head split and merge, pools' max) and single roundings
// of the same double (l3_merge_heads, l3_qkv_bias) or float sums (l3_vit_embed, which
// the kernel and torch make one float addition, equal to the double sum rounded once) must be
// exact. Double outputs (l3_bn_stats, l3_vlad, l3_bmm_nt, l3_bmm_nn_d, l3_causal_rows) must be
// within 1e-12 of the loop's relative to the sum of the magnitudes of their terms (a double sum of
// at most a few hundred terms in another order: ~1e-14 relative); l3_causal_rows' ReLU kind
// exactly. Exit 0 and a summary line, or 1 with the first mismatches on stderr.
#include <cstdint>
#include <cstring>

#include "cuda_emu.h"
#include "emu_check.h"

#include "l3_ops.cuh"
#include "matmul_tiled_ref.cuh"
#include "l3_attn.cuh"

#include <algorithm>
#include <cstdarg>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

using emu_check::ulps;

typedef long long ll;

std::mt19937 rng(20261203);
int failures = 0;
ll compared = 0;
int shapes = 0;
std::set<std::string> kernels_checked;

/* the NaN outputs hold before a launch: quiet, with a payload none of the kernels makes */
const uint32_t FILL_F = 0x7fd5a5a5u;
const uint64_t FILL_D = 0x7ffa5a5a5a5a5a5aull;

float fill_f()
{
    float f;
    memcpy(&f, &FILL_F, 4);
    return f;
}
double fill_d()
{
    double d;
    memcpy(&d, &FILL_D, 8);
    return d;
}
bool is_fill(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b == FILL_F;
}
bool is_fill(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b == FILL_D;
}
std::vector<float> filled_f(ll n) { return std::vector<float>((size_t)n, fill_f()); }
std::vector<double> filled_d(ll n) { return std::vector<double>((size_t)n, fill_d()); }

int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

std::vector<float> randn(ll n, double sd = 1.0, double mean = 0.0)
{
    std::normal_distribution<double> d(mean, sd);
    std::vector<float> v((size_t)n);
    for (float &x : v)
        x = (float)d(rng);
    return v;
}
std::vector<float> randu(ll n, double lo, double hi)
{
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<float> v((size_t)n);
    for (float &x : v)
        x = (float)d(rng);
    return v;
}
/* doubles that are not floats (so a kernel that rounded its double input to float first differs) */
std::vector<double> randn_d(ll n, double sd = 1.0)
{
    std::normal_distribution<double> d(0.0, sd);
    std::vector<double> v((size_t)n);
    for (double &x : v)
        x = d(rng) + d(rng) * 1e-6;
    return v;
}

std::string fmt(const char *f, ...)
{
    char s[300];
    va_list a;
    va_start(a, f);
    vsnprintf(s, sizeof s, f, a);
    va_end(a);
    return s;
}

ll cdiv(ll a, ll b) { return (a + b - 1) / b; }
/* the launch lines' min(cdiv(n, per), cap) */
unsigned grid_of(ll n, ll per, ll cap) { return (unsigned)std::min(cdiv(n, per), cap); }

void report(const char *kernel, const std::string &shape, ll i, const std::string &got, const std::string &want)
{
    if (failures++ < 6)
        fprintf(stderr, "%s, %s: output %lld is %s, expected %s\n", kernel, shape.c_str(), i, got.c_str(),
                want.c_str());
}
std::string show(double v, bool fill)
{
    return fill ? std::string("the NaN fill (not written)") : fmt("%.17g", v);
}

/* got against want element by element: want is the loop's value, or the fill (the element must
 * be left alone), or another NaN (a NaN must be written); finite values must satisfy close(i, g,
 * w). The first mismatch of a launch is reported. */
template <class T, class Close>
void expect_each(const char *kernel, const std::string &shape, const std::vector<T> &got,
                 const std::vector<T> &want, Close close)
{
    kernels_checked.insert(kernel);
    for (size_t i = 0; i < want.size(); i++) {
        compared++;
        const T g = got[i], w = want[i];
        bool ok;
        if (is_fill(w))
            ok = is_fill(g);
        else if (w != w)
            ok = g != g && !is_fill(g);
        else if (!std::isfinite(g) || !std::isfinite(w))
            ok = g == w;
        else
            ok = close(i, g, w);
        if (!ok) {
            report(kernel, shape, (ll)i, show(g, is_fill(g)),
                   is_fill(w) ? "to be left alone (the NaN fill)" : show(w, false));
            return;
        }
    }
}

/* A float output: within max_ulps float ulps of the loop's value rounded to float, or abs_tol
 * absolute. */
void expect_f(const char *kernel, const std::string &shape, const std::vector<float> &got,
              const std::vector<float> &want, ll max_ulps, double abs_tol)
{
    expect_each(kernel, shape, got, want, [&](size_t, float g, float w) {
        return ulps(g, w) <= max_ulps || std::fabs((double)g - (double)w) <= abs_tol;
    });
}

/* A double output: |got - want| <= rel * (|want| + scale[i]) (scale may be empty: 0), exact when
 * rel is 0. */
void expect_d(const char *kernel, const std::string &shape, const std::vector<double> &got,
              const std::vector<double> &want, const std::vector<double> &scale, double rel)
{
    expect_each(kernel, shape, got, want, [&](size_t i, double g, double w) {
        return std::fabs(g - w) <= rel * (std::fabs(w) + (scale.empty() ? 0.0 : scale[i]));
    });
}

/* bit-for-bit equality of two runs (the launch lines' grid and a smaller one) */
template <class T>
void expect_same(const char *kernel, const std::string &shape, const std::vector<T> &small, const std::vector<T> &full)
{
    for (size_t i = 0; i < full.size(); i++)
        if (memcmp(&small[i], &full[i], sizeof(T)) != 0) {
            report(kernel, shape + " (smaller grid)", (ll)i, show((double)small[i], is_fill(small[i])),
                   show((double)full[i], is_fill(full[i])) + " as on the launch lines' grid");
            return;
        }
}

/* the fill of the right type (a NaN of type T) */
template <class T> T fill_of();
template <> float fill_of<float>() { return fill_f(); }
template <> double fill_of<double>() { return fill_d(); }

/* Runs launch(grid) on the launch lines' grid and, where that is several blocks, on a smaller drawn
 * one: out is NaN-filled before each, compared with check after the first and bit for bit with the
 * first after the second. */
template <class T, class L, class C>
void run_grids(const char *kernel, const std::string &shape, unsigned grid, std::vector<T> &out, L launch, C check)
{
    shapes++;
    const T fill = fill_of<T>();
    std::fill(out.begin(), out.end(), fill);
    launch(grid);
    check();
    if (grid > 1) {
        const std::vector<T> full = out;
        std::fill(out.begin(), out.end(), fill);
        launch((unsigned)pick(1, (int)std::min(grid - 1, 3u)));
        expect_same(kernel, shape, out, full);
    }
}

/* float and double tolerances (see the opening comment) */
const double ABS = 1e-13, REL = 1e-12;

/* ---- activations, as torch defines them ---- */
double act_ref(double v, int act)
{
    switch (act) {
    case L3_RELU: return v != v ? v : v > 0 ? v : 0.0;
    case L3_TANH: return std::tanh(v);
    case L3_SIGMOID: return 1.0 / (1.0 + std::exp(-v));
    case L3_GELU: return 0.5 * v * std::erfc(-v / std::sqrt(2.0));
    case L3_RELU6: return v != v ? v : std::min(std::max(v, 0.0), 6.0);
    case L3_SILU: return v * (1.0 / (1.0 + std::exp(-v)));
    case L3_GELU_TANH:
        return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / std::acos(-1.0)) * (v + 0.044715 * v * v * v)));
    default: return v;
    }
}

/* ================================ l3_ops.cuh ================================ */

/* l3_bias_act_f / _d: src [B, nb, inner] (Linear: inner 1; conv: inner OH*OW) */
void check_bias_act(bool dbl, ll B, ll nb, ll inner, bool bias, bool res, int act)
{
    const ll n = B * nb * inner;
    const std::string shape = fmt("B=%lld nb=%lld inner=%lld bias=%d res=%d act=%d", B, nb, inner, bias, res, act);
    std::vector<double> sd = randn_d(n, 3.0);
    std::vector<float> sf = randn(n, 3.0);
    if (n > 2) /* NaN stays NaN through every activation (ReLU and ReLU6 by their own test) */
        sd[n / 2] = NAN, sf[n / 2] = NAN;
    const std::vector<float> bv = randn(nb), rv = randn(n);
    std::vector<float> want((size_t)n), y((size_t)n);
    for (ll i = 0; i < n; i++) {
        double v = dbl ? sd[i] : (double)sf[i];
        if (bias)
            v += (double)bv[i / inner % nb];
        if (res)
            v += (double)rv[i];
        want[i] = (float)act_ref(v, act);
    }
    const char *name = dbl ? "l3_bias_act_d" : "l3_bias_act_f";
    run_grids(name, shape, grid_of(n, 256, 65536), y, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] {
            if (dbl)
                l3_bias_act_d(sd.data(), bias ? bv.data() : nullptr, res ? rv.data() : nullptr, y.data(), n, inner, nb,
                              act);
            else
                l3_bias_act_f(sf.data(), bias ? bv.data() : nullptr, res ? rv.data() : nullptr, y.data(), n, inner, nb,
                              act);
        });
    }, [&] { expect_f(name, shape, y, want, 1, ABS); });
}

/* l3_bn_stats: x [N, ld, S], the first C channels */
void check_bn_stats(ll N, ll C, ll S, ll ld)
{
    const std::string shape = fmt("N=%lld C=%lld S=%lld ld=%lld", N, C, S, ld);
    std::vector<float> x = randn(N * ld * S, 2.0);
    for (ll i = 0; i < N * ld * S; i++)
        x[i] += (float)(i / S % ld) - 1.5f; /* a mean per channel */
    std::vector<double> want((size_t)(2 * C)), scale((size_t)(2 * C)), stats((size_t)(2 * C));
    for (ll c = 0; c < C; c++) {
        double s = 0, a = 0, q = 0, sq = 0;
        for (ll b = 0; b < N; b++)
            for (ll j = 0; j < S; j++) {
                const double v = x[(b * ld + c) * S + j];
                s += v, a += std::fabs(v), sq += v * v;
            }
        const double mean = s / (double)(N * S);
        for (ll b = 0; b < N; b++)
            for (ll j = 0; j < S; j++) {
                const double d = x[(b * ld + c) * S + j] - mean;
                q += d * d;
            }
        want[2 * c] = mean, scale[2 * c] = a / (double)(N * S);
        want[2 * c + 1] = q / (double)(N * S), scale[2 * c + 1] = sq / (double)(N * S);
    }
    run_grids("l3_bn_stats", shape, (unsigned)std::min(C, 65535LL), stats, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_bn_stats(x.data(), stats.data(), N, C, S, ld); });
    }, [&] { expect_d("l3_bn_stats", shape, stats, want, scale, REL); });
}

/* l3_bn_apply: y [N, C, S] from x [N, ld, S] */
void check_bn_apply(ll N, ll C, ll S, ll ld, bool res, int act)
{
    const ll n = N * C * S;
    const std::string shape = fmt("N=%lld C=%lld S=%lld ld=%lld res=%d act=%d", N, C, S, ld, res, act);
    const std::vector<float> x = randn(N * ld * S, 2.0), gamma = randn(C, 1.0, 1.0), beta = randn(C), rv = randn(n);
    std::vector<double> stats((size_t)(2 * C));
    for (ll c = 0; c < C; c++)
        stats[2 * c] = randn_d(1)[0], stats[2 * c + 1] = c == 0 ? 0.0 : std::exp(randn_d(1)[0]); /* a variance 0: eps */
    const double eps = 1e-5;
    std::vector<float> want((size_t)n), y((size_t)n);
    for (ll b = 0; b < N; b++)
        for (ll c = 0; c < C; c++)
            for (ll s = 0; s < S; s++) {
                const ll i = (b * C + c) * S + s;
                double v =
                    (x[(b * ld + c) * S + s] - stats[2 * c]) / std::sqrt(stats[2 * c + 1] + eps) * gamma[c] + beta[c];
                if (res)
                    v += rv[i];
                want[i] = (float)act_ref(v, act);
            }
    run_grids("l3_bn_apply", shape, grid_of(n, 256, 65536), y, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] {
            l3_bn_apply(x.data(), stats.data(), gamma.data(), beta.data(), res ? rv.data() : nullptr, y.data(), n, C, S,
                        ld, eps, act);
        });
    }, [&] { expect_f("l3_bn_apply", shape, y, want, 1, ABS); });
}

/* l3_maxpool2d and l3_avgpool2d: x [NC, H, W] */
void check_pool(bool maxp, ll NC, int H, int W, int K, int S, int P, bool nan)
{
    const int OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;
    const ll n = NC * OH * OW;
    const std::string shape = fmt("NC=%lld H=%d W=%d K=%d S=%d P=%d nan=%d", NC, H, W, K, S, P, nan);
    std::vector<float> x = randn(NC * H * W);
    if (nan)
        x[(size_t)pick(0, (int)(NC * H * W - 1))] = NAN;
    std::vector<float> want((size_t)n), y((size_t)n);
    for (ll c = 0; c < NC; c++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                double m = -INFINITY, s = 0;
                bool has_nan = false;
                for (int kh = 0; kh < K; kh++)
                    for (int kw = 0; kw < K; kw++) {
                        const int ih = oh * S - P + kh, iw = ow * S - P + kw;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                            continue;
                        const double v = x[(c * H + ih) * W + iw];
                        has_nan |= v != v, m = std::max(m, v), s += v;
                    }
                want[(c * OH + oh) * OW + ow] = maxp ? (has_nan ? NAN : (float)m) : (float)(s / (K * K));
            }
    const char *name = maxp ? "l3_maxpool2d" : "l3_avgpool2d";
    run_grids(name, shape, grid_of(n, 256, 65536), y, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] {
            if (maxp)
                l3_maxpool2d(x.data(), y.data(), NC, H, W, OH, OW, K, S, P);
            else
                l3_avgpool2d(x.data(), y.data(), NC, H, W, OH, OW, K, S, P);
        });
    }, [&] { expect_f(name, shape, y, want, maxp ? 0 : 1, maxp ? 0.0 : ABS); });
}

/* l3_row_mean: x [rows, L], one warp per row */
void check_row_mean(ll rows, ll L, int act)
{
    const std::string shape = fmt("rows=%lld L=%lld act=%d", rows, L, act);
    const std::vector<float> x = randn(rows * L, 1.0, 0.3);
    std::vector<float> want((size_t)rows), y((size_t)rows);
    for (ll r = 0; r < rows; r++) {
        double s = 0;
        for (ll j = 0; j < L; j++)
            s += x[r * L + j];
        want[r] = (float)act_ref(s / (double)L, act);
    }
    run_grids("l3_row_mean", shape, grid_of(rows, 8, 65536), y, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_row_mean(x.data(), y.data(), rows, L, act); });
    }, [&] { expect_f("l3_row_mean", shape, y, want, 1, ABS); });
}

/* l3_copy_channels: src [N, Cs, S] into channels c0.. of dst [N, Cd, S]; the others left alone */
void check_copy_channels(ll N, ll Cs, ll S, ll Cd, ll c0)
{
    const std::string shape = fmt("N=%lld Cs=%lld S=%lld Cd=%lld c0=%lld", N, Cs, S, Cd, c0);
    const std::vector<float> src = randn(N * Cs * S);
    std::vector<float> want = filled_f(N * Cd * S), dst((size_t)(N * Cd * S));
    for (ll b = 0; b < N; b++)
        for (ll c = 0; c < Cs; c++)
            for (ll s = 0; s < S; s++)
                want[(b * Cd + c0 + c) * S + s] = src[(b * Cs + c) * S + s];
    run_grids("l3_copy_channels", shape, grid_of(N * Cs * S, 256, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_copy_channels(src.data(), dst.data(), N, Cs, S, Cd, c0); });
    }, [&] { expect_f("l3_copy_channels", shape, dst, want, 0, 0.0); });
}

void check_copy(ll n)
{
    const std::string shape = fmt("n=%lld", n);
    const std::vector<float> src = randn(n);
    std::vector<float> dst((size_t)n);
    run_grids("l3_copy", shape, grid_of(n, 256, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_copy(src.data(), dst.data(), n); });
    }, [&] { expect_f("l3_copy", shape, dst, src, 0, 0.0); });
}

/* l3_copy_rows: src holds (rows - 1) * ld + cols floats (a strided slice, as the last time step) */
void check_copy_rows(ll rows, ll cols, ll ld)
{
    const std::string shape = fmt("rows=%lld cols=%lld ld=%lld", rows, cols, ld);
    const std::vector<float> src = randn((rows - 1) * ld + cols);
    std::vector<float> want((size_t)(rows * cols)), dst((size_t)(rows * cols));
    for (ll r = 0; r < rows; r++)
        for (ll c = 0; c < cols; c++)
            want[r * cols + c] = src[r * ld + c];
    run_grids("l3_copy_rows", shape, grid_of(rows * cols, 256, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_copy_rows(src.data(), dst.data(), rows, cols, ld); });
    }, [&] { expect_f("l3_copy_rows", shape, dst, want, 0, 0.0); });
}

/* l3_slice_channels: dst [N, Cd, S] = channels c0.. of src [N, Cs, S] */
void check_slice_channels(ll N, ll Cs, ll S, ll Cd, ll c0)
{
    const std::string shape = fmt("N=%lld Cs=%lld S=%lld Cd=%lld c0=%lld", N, Cs, S, Cd, c0);
    const std::vector<float> src = randn(N * Cs * S);
    std::vector<float> want((size_t)(N * Cd * S)), dst((size_t)(N * Cd * S));
    for (ll b = 0; b < N; b++)
        for (ll c = 0; c < Cd; c++)
            for (ll s = 0; s < S; s++)
                want[(b * Cd + c) * S + s] = src[(b * Cs + c0 + c) * S + s];
    run_grids("l3_slice_channels", shape, grid_of(N * Cd * S, 256, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_slice_channels(src.data(), dst.data(), N, Cs, S, Cd, c0); });
    }, [&] { expect_f("l3_slice_channels", shape, dst, want, 0, 0.0); });
}

/* l3_channel_shuffle: torch's x.view(N, G, C/G, S).transpose(1, 2).reshape(N, C, S) */
void check_channel_shuffle(ll N, ll C, ll S, ll G)
{
    const std::string shape = fmt("N=%lld C=%lld S=%lld G=%lld", N, C, S, G);
    const std::vector<float> src = randn(N * C * S);
    std::vector<float> want((size_t)(N * C * S)), dst((size_t)(N * C * S));
    const ll cg = C / G;
    for (ll b = 0; b < N; b++)
        for (ll g = 0; g < G; g++)
            for (ll j = 0; j < cg; j++) /* the view's element [b, g, j] lands at [b, j, g] */
                for (ll s = 0; s < S; s++)
                    want[((b * cg + j) * G + g) * S + s] = src[((b * G + g) * cg + j) * S + s];
    run_grids("l3_channel_shuffle", shape, grid_of(N * C * S, 256, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_channel_shuffle(src.data(), dst.data(), N, C, S, G); });
    }, [&] { expect_f("l3_channel_shuffle", shape, dst, want, 0, 0.0); });
}

/* l3_softmax_rows: the first keep columns of softmax over rows of L; some rows scaled so that exp
 * overflows without the max subtracted */
void check_softmax_rows(ll rows, ll L, ll keep)
{
    const std::string shape = fmt("rows=%lld L=%lld keep=%lld", rows, L, keep);
    std::vector<float> src = randn(rows * L, 2.0);
    for (ll r = 0; r < rows; r += 3)
        for (ll j = 0; j < L; j++)
            src[r * L + j] = src[r * L + j] * 400.0f + 900.0f;
    std::vector<float> want((size_t)(rows * keep)), dst((size_t)(rows * keep));
    for (ll r = 0; r < rows; r++) {
        double m = -INFINITY, s = 0;
        for (ll j = 0; j < L; j++)
            m = std::max(m, (double)src[r * L + j]);
        for (ll j = 0; j < L; j++)
            s += std::exp(src[r * L + j] - m);
        for (ll j = 0; j < keep; j++)
            want[r * keep + j] = (float)(std::exp(src[r * L + j] - m) / s);
    }
    run_grids("l3_softmax_rows", shape, grid_of(rows, 8, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_softmax_rows(src.data(), dst.data(), rows, L, keep); });
    }, [&] { expect_f("l3_softmax_rows", shape, dst, want, 1, ABS); });
}

/* l3_vlad: v [B, D, K] double from a [B, N, K], x [B, N, D], c2 [D, K] */
void check_vlad(ll B, ll N, ll D, ll K)
{
    const std::string shape = fmt("B=%lld N=%lld D=%lld K=%lld", B, N, D, K);
    const std::vector<float> a = randu(B * N * K, 0.0, 1.0), x = randn(B * N * D), c2 = randn(D * K);
    std::vector<double> want((size_t)(B * D * K)), scale((size_t)(B * D * K)), v((size_t)(B * D * K));
    for (ll b = 0; b < B; b++)
        for (ll d = 0; d < D; d++)
            for (ll k = 0; k < K; k++) {
                double s = 0, as = 0, mag = 0;
                for (ll j = 0; j < N; j++) {
                    const double w = a[(b * N + j) * K + k], p = w * x[(b * N + j) * D + d];
                    s += p, as += w, mag += std::fabs(p);
                }
                const ll i = (b * D + d) * K + k;
                want[i] = s - as * c2[d * K + k], scale[i] = mag + std::fabs(as * c2[d * K + k]);
            }
    run_grids("l3_vlad", shape, grid_of(B * D * K, 256, 65536), v, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_vlad(a.data(), x.data(), c2.data(), v.data(), B, N, D, K); });
    }, [&] { expect_d("l3_vlad", shape, v, want, scale, REL); });
}

/* l3_vlad_normalize: F.normalize of each column of v[b] (D x K) over d, then of the row; a zero
 * column takes the 1e-12 floor (its outputs 0) */
void check_vlad_normalize(ll B, ll D, ll K, bool zero_col)
{
    const std::string shape = fmt("B=%lld D=%lld K=%lld zero_col=%d", B, D, K, zero_col);
    std::vector<double> v = randn_d(B * D * K);
    if (zero_col)
        for (ll d = 0; d < D; d++)
            v[d * K + K / 2] = 0.0;
    std::vector<float> want((size_t)(B * D * K)), y((size_t)(B * D * K));
    for (ll b = 0; b < B; b++) {
        const double *p = v.data() + b * D * K;
        std::vector<double> e((size_t)(D * K));
        for (ll k = 0; k < K; k++) {
            double q = 0;
            for (ll d = 0; d < D; d++)
                q += p[d * K + k] * p[d * K + k];
            for (ll d = 0; d < D; d++)
                e[d * K + k] = p[d * K + k] / std::max(std::sqrt(q), 1e-12);
        }
        double q = 0;
        for (ll i = 0; i < D * K; i++)
            q += e[i] * e[i];
        for (ll i = 0; i < D * K; i++)
            want[b * D * K + i] = (float)(e[i] / std::max(std::sqrt(q), 1e-12));
    }
    const ll smem = 8 * K; /* the launch lines' dynamic shared memory */
    if (smem > (ll)sizeof emu_dynamic_smem) {
        fprintf(stderr, "l3_vlad_normalize, %s: needs %lld bytes of shared memory\n", shape.c_str(), smem);
        failures++;
        return;
    }
    run_grids("l3_vlad_normalize", shape, (unsigned)std::min(B, 65535LL), y, [&](unsigned g) {
        memset(emu_dynamic_smem, 0xff, (size_t)smem); /* NaN: colscale must be written before it is read */
        emu::launch(dim3(g), dim3(256), [&] { l3_vlad_normalize(v.data(), y.data(), B, D, K); });
    }, [&] { expect_f("l3_vlad_normalize", shape, y, want, 1, ABS); });
}

/* l3_upconv2x2: ConvTranspose2d(CI, CO, 2, stride 2) with bias, scattered from the inputs */
void check_upconv2x2(ll B, ll CI, ll CO, ll H, ll W)
{
    const std::string shape = fmt("B=%lld CI=%lld CO=%lld H=%lld W=%lld", B, CI, CO, H, W);
    const std::vector<float> x = randn(B * CI * H * W), w = randn(CI * CO * 4), bias = randn(CO);
    const ll OH = 2 * H, OW = 2 * W, n = B * CO * OH * OW;
    std::vector<double> acc((size_t)n, 0.0);
    for (ll b = 0; b < B; b++) /* each input pixel scatters a 2x2 block per output channel */
        for (ll ci = 0; ci < CI; ci++)
            for (ll h = 0; h < H; h++)
                for (ll x0 = 0; x0 < W; x0++)
                    for (ll co = 0; co < CO; co++)
                        for (ll kh = 0; kh < 2; kh++)
                            for (ll kw = 0; kw < 2; kw++)
                                acc[((b * CO + co) * OH + 2 * h + kh) * OW + 2 * x0 + kw] +=
                                    (double)x[((b * CI + ci) * H + h) * W + x0] * w[((ci * CO + co) * 2 + kh) * 2 + kw];
    std::vector<float> want((size_t)n), y((size_t)n);
    for (ll i = 0; i < n; i++)
        want[i] = (float)(acc[i] + bias[i / (OH * OW) % CO]);
    run_grids(
        "l3_upconv2x2", shape, grid_of(n, 256, 65536), y,
        [&](unsigned g) {
            emu::launch(dim3(g), dim3(256),
                        [&] { l3_upconv2x2(x.data(), w.data(), bias.data(), y.data(), B, CI, CO, H, W); });
        },
        [&] { expect_f("l3_upconv2x2", shape, y, want, 1, ABS); });
}

/* ================================ l3_attn.cuh ================================ */

/* l3_split_heads: qkv [B, T, 3C] -> q, k, v [B, NH, T, HS] */
void check_split_heads(ll B, ll T, ll C, ll NH)
{
    const ll HS = C / NH, n = B * T * C;
    const std::string shape = fmt("B=%lld T=%lld C=%lld NH=%lld", B, T, C, NH);
    const std::vector<float> qkv = randn(B * T * 3 * C);
    std::vector<float> want((size_t)(3 * n)), out((size_t)(3 * n)); /* q, k, v one after another */
    for (ll b = 0; b < B; b++)
        for (ll t = 0; t < T; t++)
            for (ll h = 0; h < NH; h++)
                for (ll d = 0; d < HS; d++)
                    for (ll part = 0; part < 3; part++)
                        want[part * n + ((b * NH + h) * T + t) * HS + d] =
                            qkv[(b * T + t) * 3 * C + part * C + h * HS + d];
    run_grids("l3_split_heads", shape, grid_of(n, 256, 65536), out, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] {
            l3_split_heads(qkv.data(), out.data(), out.data() + n, out.data() + 2 * n, B, T, C, NH);
        });
    }, [&] { expect_f("l3_split_heads", shape, out, want, 0, 0.0); });
}

/* l3_merge_heads: y [B, NH, T, HS] double -> out [B, T, C] float */
void check_merge_heads(ll B, ll T, ll C, ll NH)
{
    const ll HS = C / NH, n = B * T * C;
    const std::string shape = fmt("B=%lld T=%lld C=%lld NH=%lld", B, T, C, NH);
    const std::vector<double> y = randn_d(n);
    std::vector<float> want((size_t)n), out((size_t)n);
    for (ll b = 0; b < B; b++)
        for (ll h = 0; h < NH; h++)
            for (ll t = 0; t < T; t++)
                for (ll d = 0; d < HS; d++)
                    want[(b * T + t) * C + h * HS + d] = (float)y[((b * NH + h) * T + t) * HS + d];
    run_grids("l3_merge_heads", shape, grid_of(n, 256, 65536), out, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_merge_heads(y.data(), out.data(), B, T, C, NH); });
    }, [&] { expect_f("l3_merge_heads", shape, out, want, 0, 0.0); });
}

/* l3_bmm_nt: S[z] = A[z] B[z]^T / sqrt(rs); at Z = 1 and rs = 1, l3_linear_nt */
void check_bmm_nt(ll Z, ll rows, ll cols, ll inner, ll rs)
{
    const std::string shape = fmt("Z=%lld rows=%lld cols=%lld inner=%lld rs=%lld", Z, rows, cols, inner, rs);
    const std::vector<float> A = randn(Z * rows * inner), Bm = randn(Z * cols * inner);
    std::vector<double> want((size_t)(Z * rows * cols)), scale(want.size()), S(want.size());
    for (ll z = 0; z < Z; z++)
        for (ll r = 0; r < rows; r++)
            for (ll c = 0; c < cols; c++) {
                double s = 0, a = 0;
                for (ll k = 0; k < inner; k++) {
                    const double p = (double)A[(z * rows + r) * inner + k] * Bm[(z * cols + c) * inner + k];
                    s += p, a += std::fabs(p);
                }
                want[(z * rows + r) * cols + c] = s / std::sqrt((double)rs);
                scale[(z * rows + r) * cols + c] = a / std::sqrt((double)rs);
            }
    shapes++;
    std::fill(S.begin(), S.end(), fill_d());
    emu::launch(dim3((unsigned)cdiv(rows, 64), (unsigned)cdiv(cols, 64), (unsigned)Z), dim3(16, 16),
                [&] { l3_bmm_nt(A.data(), Bm.data(), S.data(), rows, cols, inner, rs); });
    expect_d("l3_bmm_nt", shape, S, want, scale, REL);
}

/* l3_bmm_nn_d: Y[z] = P[z] V[z] (P double rows x inner, V float inner x cols) */
void check_bmm_nn_d(ll Z, ll rows, ll cols, ll inner)
{
    const std::string shape = fmt("Z=%lld rows=%lld cols=%lld inner=%lld", Z, rows, cols, inner);
    const std::vector<double> P = randn_d(Z * rows * inner);
    const std::vector<float> V = randn(Z * inner * cols);
    std::vector<double> want((size_t)(Z * rows * cols)), scale(want.size()), Y(want.size());
    for (ll z = 0; z < Z; z++)
        for (ll r = 0; r < rows; r++)
            for (ll c = 0; c < cols; c++) {
                double s = 0, a = 0;
                for (ll k = 0; k < inner; k++) {
                    const double p = P[(z * rows + r) * inner + k] * V[(z * inner + k) * cols + c];
                    s += p, a += std::fabs(p);
                }
                want[(z * rows + r) * cols + c] = s, scale[(z * rows + r) * cols + c] = a;
            }
    shapes++;
    std::fill(Y.begin(), Y.end(), fill_d());
    emu::launch(dim3((unsigned)cdiv(rows, 64), (unsigned)cdiv(cols, 64), (unsigned)Z), dim3(16, 16),
                [&] { l3_bmm_nn_d(P.data(), V.data(), Y.data(), rows, cols, inner); });
    expect_d("l3_bmm_nn_d", shape, Y, want, scale, REL);
}

/* the rows of l3_causal_rows, in place: kind 0 causal softmax, 1 causal ReLU, 2 softmax */
std::vector<double> causal_ref(const std::vector<double> &S, ll R, ll T, int kind)
{
    std::vector<double> out(S.size());
    for (ll r = 0; r < R; r++) {
        const double *row = S.data() + r * T;
        const ll i = kind == 2 ? T - 1 : r % T;
        double m = -INFINITY, s = 0;
        for (ll j = 0; j <= i; j++)
            m = std::max(m, row[j]);
        for (ll j = 0; j <= i; j++)
            s += std::exp(row[j] - m);
        for (ll j = 0; j < T; j++)
            out[r * T + j] = j > i ? 0.0 : kind == 1 ? (row[j] != row[j] ? row[j] : std::max(row[j], 0.0))
                                                     : std::exp(row[j] - m) / s;
    }
    return out;
}

void check_causal_rows(ll R, ll T, int kind)
{
    const std::string shape = fmt("R=%lld T=%lld kind=%d", R, T, kind);
    std::vector<double> S0 = randn_d(R * T, 3.0);
    if (kind == 1 && R * T > 3)
        S0[R * T / 3] = NAN; /* a NaN score stays NaN where unmasked */
    const std::vector<double> want = causal_ref(S0, R, T, kind);
    const unsigned grid = grid_of(R, 8, 65536);
    shapes++;
    std::vector<double> S = S0;
    emu::launch(dim3(grid), dim3(256), [&] { l3_causal_rows(S.data(), R, T, kind); });
    expect_d("l3_causal_rows", shape, S, want, {}, kind == 1 ? 0.0 : REL);
    if (grid > 1) {
        const std::vector<double> full = S;
        S = S0;
        emu::launch(dim3((unsigned)pick(1, (int)std::min(grid - 1, 3u))), dim3(256),
                    [&] { l3_causal_rows(S.data(), R, T, kind); });
        expect_same("l3_causal_rows", shape, S, full);
    }
}

/* l3_layernorm over the last dim C of x [rows, C] */
void check_layernorm(ll rows, ll C)
{
    const std::string shape = fmt("rows=%lld C=%lld", rows, C);
    const std::vector<float> x = randn(rows * C, 2.0, 0.7), g = randn(C, 1.0, 1.0), b = randn(C);
    const double eps = 1e-5;
    std::vector<float> want((size_t)(rows * C)), y((size_t)(rows * C));
    for (ll r = 0; r < rows; r++) {
        double s = 0, q = 0;
        for (ll j = 0; j < C; j++)
            s += x[r * C + j];
        const double mean = s / (double)C;
        for (ll j = 0; j < C; j++)
            q += (x[r * C + j] - mean) * (x[r * C + j] - mean);
        const double sd = std::sqrt(q / (double)C + eps);
        for (ll j = 0; j < C; j++)
            want[r * C + j] = (float)((x[r * C + j] - mean) / sd * g[j] + b[j]);
    }
    run_grids("l3_layernorm", shape, (unsigned)std::min(rows, 65535LL), y, [&](unsigned gr) {
        emu::launch(dim3(gr), dim3(256), [&] { l3_layernorm(x.data(), g.data(), b.data(), y.data(), rows, C, eps); });
    }, [&] { expect_f("l3_layernorm", shape, y, want, 1, ABS); });
}

/* l3_transpose: dst [N, C, R] from src [N, R, C] */
void check_transpose(ll N, ll R, ll C)
{
    const std::string shape = fmt("N=%lld R=%lld C=%lld", N, R, C);
    const std::vector<float> src = randn(N * R * C);
    std::vector<float> want((size_t)(N * R * C)), dst(want.size());
    for (ll b = 0; b < N; b++)
        for (ll r = 0; r < R; r++)
            for (ll c = 0; c < C; c++)
                want[(b * C + c) * R + r] = src[(b * R + r) * C + c];
    run_grids("l3_transpose", shape, grid_of(N * R * C, 256, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_transpose(src.data(), dst.data(), N, R, C); });
    }, [&] { expect_f("l3_transpose", shape, dst, want, 0, 0.0); });
}

/* l3_vit_patches: img.unfold(2, P, P).unfold(3, P, P) ([B, CH, G, G, P, P]) read in order and
 * reshaped to [B, G*G, P*P*CH] */
void check_vit_patches(ll B, ll CH, ll IMG, ll P)
{
    const std::string shape = fmt("B=%lld CH=%lld IMG=%lld P=%lld", B, CH, IMG, P);
    const ll G = IMG / P;
    const std::vector<float> img = randn(B * CH * IMG * IMG);
    std::vector<float> want, out((size_t)(B * CH * IMG * IMG));
    for (ll b = 0; b < B; b++)
        for (ll ch = 0; ch < CH; ch++)
            for (ll gi = 0; gi < G; gi++)
                for (ll gj = 0; gj < G; gj++)
                    for (ll a = 0; a < P; a++)
                        for (ll c = 0; c < P; c++)
                            want.push_back(img[((b * CH + ch) * IMG + gi * P + a) * IMG + gj * P + c]);
    run_grids("l3_vit_patches", shape, grid_of(B * CH * IMG * IMG, 256, 65536), out, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_vit_patches(img.data(), out.data(), B, CH, IMG, P); });
    }, [&] { expect_f("l3_vit_patches", shape, out, want, 0, 0.0); });
}

/* l3_vit_embed: out [N1, B, E]: token 0 cls, token t the patch t - 1, plus pos[t] */
void check_vit_embed(ll B, ll N1, ll E)
{
    const std::string shape = fmt("B=%lld N1=%lld E=%lld", B, N1, E);
    const std::vector<float> emb = randn(B * (N1 - 1) * E), cls = randn(E), pos = randn(N1 * E);
    std::vector<float> want((size_t)(N1 * B * E)), out(want.size());
    for (ll t = 0; t < N1; t++)
        for (ll b = 0; b < B; b++)
            for (ll e = 0; e < E; e++)
                want[(t * B + b) * E + e] =
                    (float)((double)(t == 0 ? cls[e] : emb[(b * (N1 - 1) + t - 1) * E + e]) + pos[t * E + e]);
    run_grids(
        "l3_vit_embed", shape, grid_of(N1 * B * E, 256, 65536), out,
        [&](unsigned g) {
            emu::launch(dim3(g), dim3(256),
                        [&] { l3_vit_embed(emb.data(), cls.data(), pos.data(), out.data(), B, N1, E); });
        },
        [&] { expect_f("l3_vit_embed", shape, out, want, 0, 0.0); });
}

/* l3_broadcast_rows: src into each row of dst (ld apart; the gaps left alone) */
void check_broadcast_rows(ll rows, ll cols, ll ld)
{
    const std::string shape = fmt("rows=%lld cols=%lld ld=%lld", rows, cols, ld);
    const std::vector<float> src = randn(cols);
    std::vector<float> want = filled_f((rows - 1) * ld + cols), dst(want.size());
    for (ll r = 0; r < rows; r++)
        for (ll c = 0; c < cols; c++)
            want[r * ld + c] = src[c];
    run_grids("l3_broadcast_rows", shape, grid_of(rows * cols, 256, 65536), dst, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_broadcast_rows(src.data(), dst.data(), rows, cols, ld); });
    }, [&] { expect_f("l3_broadcast_rows", shape, dst, want, 0, 0.0); });
}

/* l3_swin_spatial, as Swin-MLP computes it: x [B, H, W, C] zero-padded (WS - SHIFT before, SHIFT
 * after, when shifted), cut into WS x WS windows, each head's channels mixed across the window's
 * positions (grouped Conv1d: weight [NH*WS*WS, WS*WS], bias), windows put back, padding cut,
 * residual added. H and W multiples of WS, as in the references. */
void check_swin_spatial(ll B, ll H, ll W, ll C, ll NH, ll WS, ll SHIFT)
{
    const std::string shape = fmt("B=%lld H=%lld W=%lld C=%lld NH=%lld WS=%lld SHIFT=%lld", B, H, W, C, NH, WS, SHIFT);
    const ll w2 = WS * WS, hd = C / NH, P = SHIFT > 0 ? WS - SHIFT : 0, Hp = H + (SHIFT > 0 ? WS : 0),
             Wp = W + (SHIFT > 0 ? WS : 0), n = B * H * W * C;
    const std::vector<float> x = randn(n), wt = randn(NH * w2 * w2, 1.0 / (double)WS), bias = randn(NH * w2),
                             res = randn(n);
    std::vector<double> xp((size_t)(B * Hp * Wp * C), 0.0);
    for (ll b = 0; b < B; b++)
        for (ll h = 0; h < H; h++)
            for (ll w = 0; w < W; w++)
                for (ll c = 0; c < C; c++)
                    xp[((b * Hp + h + P) * Wp + w + P) * C + c] = x[((b * H + h) * W + w) * C + c];
    std::vector<float> want((size_t)n), out((size_t)n);
    for (ll b = 0; b < B; b++)
        for (ll wy = 0; wy < Hp / WS; wy++)
            for (ll wx = 0; wx < Wp / WS; wx++)
                for (ll c = 0; c < C; c++)
                    for (ll i = 0; i < w2; i++) {
                        const ll h = wy * WS + i / WS - P, w = wx * WS + i % WS - P, o = c / hd * w2 + i;
                        if (h < 0 || h >= H || w < 0 || w >= W)
                            continue;
                        double s = bias[o];
                        for (ll j = 0; j < w2; j++)
                            s += (double)wt[o * w2 + j] *
                                 xp[((b * Hp + wy * WS + j / WS) * Wp + wx * WS + j % WS) * C + c];
                        want[((b * H + h) * W + w) * C + c] = (float)(s + res[((b * H + h) * W + w) * C + c]);
                    }
    run_grids("l3_swin_spatial", shape, grid_of(n, 256, 65536), out, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] {
            l3_swin_spatial(x.data(), wt.data(), bias.data(), res.data(), out.data(), B, H, W, C, NH, WS, SHIFT);
        });
    }, [&] { expect_f("l3_swin_spatial", shape, out, want, 1, ABS); });
}

/* l3_patch_merge: torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1) */
void check_patch_merge(ll B, ll H, ll W, ll C)
{
    const std::string shape = fmt("B=%lld H=%lld W=%lld C=%lld", B, H, W, C);
    const std::vector<float> x = randn(B * H * W * C);
    const ll OH = H / 2, OW = W / 2;
    const int dh[4] = {0, 1, 0, 1}, dw[4] = {0, 0, 1, 1};
    std::vector<float> want((size_t)(B * OH * OW * 4 * C)), y(want.size());
    for (ll b = 0; b < B; b++)
        for (ll i = 0; i < OH; i++)
            for (ll j = 0; j < OW; j++)
                for (int q = 0; q < 4; q++)
                    for (ll c = 0; c < C; c++)
                        want[(((b * OH + i) * OW + j) * 4 + q) * C + c] =
                            x[((b * H + 2 * i + dh[q]) * W + 2 * j + dw[q]) * C + c];
    run_grids("l3_patch_merge", shape, grid_of((ll)want.size(), 256, 65536), y, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_patch_merge(x.data(), y.data(), B, H, W, C); });
    }, [&] { expect_f("l3_patch_merge", shape, y, want, 0, 0.0); });
}

/* l3_qkv_bias: acc [rows, 3C] + cat(q_bias, 0, v_bias) */
void check_qkv_bias(ll rows, ll C)
{
    const std::string shape = fmt("rows=%lld C=%lld", rows, C);
    const std::vector<double> acc = randn_d(rows * 3 * C);
    const std::vector<float> qb = randn(C), vb = randn(C);
    std::vector<float> want((size_t)(rows * 3 * C)), y(want.size());
    for (ll r = 0; r < rows; r++)
        for (ll part = 0; part < 3; part++)
            for (ll c = 0; c < C; c++) {
                const ll i = r * 3 * C + part * C + c;
                want[i] = (float)(acc[i] + (part == 0 ? (double)qb[c] : part == 2 ? (double)vb[c] : 0.0));
            }
    run_grids("l3_qkv_bias", shape, grid_of(rows * 3 * C, 256, 65536), y, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_qkv_bias(acc.data(), qb.data(), vb.data(), y.data(), rows, C); });
    }, [&] { expect_f("l3_qkv_bias", shape, y, want, 0, 0.0); });
}

/* l3_swin_cpb: Swin V2's continuous position bias table: relative_coords_table (log-spaced, / 8
 * ... as in the module), cpb_mlp = Linear(2, 512) ReLU Linear(512, NH, no bias), 16 sigmoid;
 * table [(2WS-1)^2, NH], offset (dy, dx) at (dy + WS - 1) * (2WS - 1) + dx + WS - 1 */
void check_swin_cpb(ll WS, ll NH)
{
    const std::string shape = fmt("WS=%lld NH=%lld", WS, NH);
    const ll side = 2 * WS - 1, n = side * side * NH;
    const std::vector<float> w1 = randn(1024), b1 = randn(512), w2 = randn(NH * 512, 1.0 / std::sqrt(512.0));
    std::vector<float> want((size_t)n), out((size_t)n);
    for (ll dy = -(WS - 1); dy <= WS - 1; dy++)
        for (ll dx = -(WS - 1); dx <= WS - 1; dx++) {
            double t[2];
            const ll d[2] = {dy, dx};
            for (int a = 0; a < 2; a++) {
                const double u = (double)d[a] / (double)(WS - 1) * 8.0;
                t[a] = (u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0) * std::log2(std::fabs(u) + 1.0) / std::log2(8.0);
            }
            for (ll h = 0; h < NH; h++) {
                double s = 0;
                for (int k = 0; k < 512; k++)
                    s += (double)w2[h * 512 + k] *
                         std::max(0.0, (double)w1[2 * k] * t[0] + (double)w1[2 * k + 1] * t[1] + b1[k]);
                want[((dy + WS - 1) * side + dx + WS - 1) * NH + h] = (float)(16.0 / (1.0 + std::exp(-s)));
            }
        }
    run_grids("l3_swin_cpb", shape, (unsigned)cdiv(n, 256), out, [&](unsigned g) {
        emu::launch(dim3(g), dim3(256), [&] { l3_swin_cpb(w1.data(), b1.data(), w2.data(), out.data(), WS, NH); });
    }, [&] { expect_f("l3_swin_cpb", shape, out, want, 1, ABS); });
}

/* l3_swin_v2_attn, as Swin V2's block computes it: the frame rolled by -SHIFT, WS x WS windows,
 * cosine scores times exp(min(logit_scale, log 100)) plus the table's bias, -100 between tokens of
 * different regions of the rolled frame's img_mask (shifted blocks), softmax, P V, the windows put
 * back and rolled by +SHIFT. */
void check_swin_v2_attn(ll B, ll H, ll W, ll C, ll NH, ll WS, ll SHIFT)
{
    const std::string shape = fmt("B=%lld H=%lld W=%lld C=%lld NH=%lld WS=%lld SHIFT=%lld", B, H, W, C, NH, WS, SHIFT);
    const ll HD = C / NH, side = 2 * WS - 1, w2 = WS * WS, n = B * H * W * C;
    const std::vector<float> qkv = randn(B * H * W * 3 * C), tab = randu(side * side * NH, 0.0, 16.0),
                             ls = randu(NH, 1.0, 6.0); /* some above log 100: the clamp */
    auto region = [&](ll v, ll len) { return v < len - WS ? 0 : v < len - SHIFT ? 1 : 2; };
    std::vector<float> want((size_t)n), out((size_t)n);
    std::vector<double> qn((size_t)(w2 * HD)), kn((size_t)(w2 * HD)), p((size_t)w2);
    std::vector<ll> orig((size_t)w2);
    for (ll b = 0; b < B; b++)
        for (ll wy = 0; wy < H / WS; wy++)
            for (ll wx = 0; wx < W / WS; wx++)
                for (ll hd = 0; hd < NH; hd++) {
                    for (ll i = 0; i < w2; i++) { /* token i of the window: its place before the roll */
                        const ll y = wy * WS + i / WS, x = wx * WS + i % WS;
                        orig[i] = (b * H + (y + SHIFT) % H) * W + (x + SHIFT) % W;
                        for (int part = 0; part < 2; part++) {
                            const float *v = qkv.data() + orig[i] * 3 * C + part * C + hd * HD;
                            double nn = 0;
                            for (ll d = 0; d < HD; d++)
                                nn += (double)v[d] * v[d];
                            for (ll d = 0; d < HD; d++)
                                (part ? kn : qn)[i * HD + d] = v[d] / std::max(std::sqrt(nn), 1e-12);
                        }
                    }
                    const double scale = std::exp(std::min((double)ls[hd], std::log(100.0)));
                    for (ll i = 0; i < w2; i++) {
                        const ll iy = i / WS, ix = i % WS;
                        double m = -INFINITY, z = 0;
                        for (ll j = 0; j < w2; j++) {
                            const ll jy = j / WS, jx = j % WS;
                            double dot = 0;
                            for (ll d = 0; d < HD; d++)
                                dot += qn[i * HD + d] * kn[j * HD + d];
                            double a = dot * scale + tab[((iy - jy + WS - 1) * side + ix - jx + WS - 1) * NH + hd];
                            if (SHIFT > 0 && 3 * region(wy * WS + iy, H) + region(wx * WS + ix, W) !=
                                                 3 * region(wy * WS + jy, H) + region(wx * WS + jx, W))
                                a -= 100.0;
                            p[j] = a, m = std::max(m, a);
                        }
                        for (ll j = 0; j < w2; j++)
                            z += p[j] = std::exp(p[j] - m);
                        for (ll d = 0; d < HD; d++) {
                            double o = 0;
                            for (ll j = 0; j < w2; j++)
                                o += p[j] / z * qkv[orig[j] * 3 * C + 2 * C + hd * HD + d];
                            want[orig[i] * C + hd * HD + d] = (float)o;
                        }
                    }
                }
    run_grids("l3_swin_v2_attn", shape, grid_of(B * H * W * NH, 128, 65536), out, [&](unsigned g) {
        emu::launch(dim3(g), dim3(128), [&] {
            l3_swin_v2_attn(qkv.data(), tab.data(), ls.data(), out.data(), B, H, W, C, NH, WS, SHIFT);
        });
    }, [&] { expect_f("l3_swin_v2_attn", shape, out, want, 1, ABS); });
}

/* minGPT's causal self-attention between c_attn and c_proj, chained as references 043, 044 (kind 0)
 * and 050 (kind 1) launch it (level3_net.py's causal_attention), against softmax(Q K^T / sqrt(HS))
 * (or its ReLU) masked, times V, the heads side by side, in double from qkv [B, T, 3C] */
void check_attention_chain(ll B, ll T, ll C, ll NH, int kind)
{
    const std::string shape = fmt("B=%lld T=%lld C=%lld NH=%lld kind=%d", B, T, C, NH, kind);
    const ll HS = C / NH, n = B * T * C;
    const std::vector<float> qkv = randn(B * T * 3 * C);
    std::vector<float> want((size_t)n), y = filled_f(n), q = filled_f(n), k = filled_f(n), v = filled_f(n);
    std::vector<double> att((size_t)T);
    for (ll b = 0; b < B; b++)
        for (ll h = 0; h < NH; h++)
            for (ll i = 0; i < T; i++) {
                const float *qi = qkv.data() + (b * T + i) * 3 * C + h * HS;
                double m = -INFINITY, z = 0;
                for (ll j = 0; j <= i; j++) {
                    const float *kj = qkv.data() + (b * T + j) * 3 * C + C + h * HS;
                    double s = 0;
                    for (ll d = 0; d < HS; d++)
                        s += (double)qi[d] * kj[d];
                    att[j] = s / std::sqrt((double)HS), m = std::max(m, att[j]);
                }
                for (ll j = 0; j <= i; j++)
                    z += std::exp(att[j] - m);
                for (ll d = 0; d < HS; d++) {
                    double o = 0;
                    for (ll j = 0; j <= i; j++)
                        o += (kind == 1 ? std::max(att[j], 0.0) : std::exp(att[j] - m) / z) *
                             qkv[(b * T + j) * 3 * C + 2 * C + h * HS + d];
                    want[(b * T + i) * C + h * HS + d] = (float)o;
                }
            }
    shapes++;
    std::vector<double> s = filled_d(B * NH * T * T), yh = filled_d(n);
    emu::launch(dim3(grid_of(n, 256, 65536)), dim3(256),
                [&] { l3_split_heads(qkv.data(), q.data(), k.data(), v.data(), B, T, C, NH); });
    emu::launch(dim3((unsigned)cdiv(T, 64), (unsigned)cdiv(T, 64), (unsigned)(B * NH)), dim3(16, 16),
                [&] { l3_bmm_nt(q.data(), k.data(), s.data(), T, T, HS, HS); });
    emu::launch(dim3(grid_of(B * NH * T, 8, 65536)), dim3(256), [&] { l3_causal_rows(s.data(), B * NH * T, T, kind); });
    emu::launch(dim3((unsigned)cdiv(T, 64), (unsigned)cdiv(HS, 64), (unsigned)(B * NH)), dim3(16, 16),
                [&] { l3_bmm_nn_d(s.data(), v.data(), yh.data(), T, HS, T); });
    emu::launch(dim3(grid_of(n, 256, 65536)), dim3(256), [&] { l3_merge_heads(yh.data(), y.data(), B, T, C, NH); });
    expect_f("causal attention chain (l3_split_heads, l3_bmm_nt, l3_causal_rows, l3_bmm_nn_d, l3_merge_heads)", shape,
             y, want, 1, ABS);
}

/* ================================ shapes ================================ */

/* one drawn shape for every kernel */
void draw_round()
{
    const int dbl = pick(0, 1);
    check_bias_act(dbl, pick(1, 3), pick(1, 70), pick(1, 2) == 1 ? 1 : pick(1, 30), pick(0, 1), pick(0, 1), pick(0, 7));
    {
        const ll C = pick(1, 7);
        check_bn_stats(pick(1, 3), C, pick(1, 160), C + pick(0, 1) * pick(1, 5));
    }
    {
        const ll C = pick(1, 20);
        check_bn_apply(pick(1, 3), C, pick(1, 60), C + pick(0, 1) * pick(1, 5), pick(0, 1), pick(0, 7));
    }
    {
        const ll Cs = pick(1, 20), Cd = Cs + pick(0, 20);
        check_copy_channels(pick(1, 3), Cs, pick(1, 50), Cd, pick(0, (int)(Cd - Cs)));
    }
    {
        const int K = pick(1, 5), S = pick(1, 3), P = pick(0, K / 2);
        const int H = pick(std::max(1, K - 2 * P), 20), W = pick(std::max(1, K - 2 * P), 20);
        check_pool(true, pick(1, 6), H, W, K, S, P, pick(0, 1));
        check_pool(false, pick(1, 6), H, W, K, S, P, false);
    }
    check_layernorm(pick(1, 12), pick(1, 2) == 1 ? pick(1, 40) : pick(200, 600));
    {
        const ll L = pick(1, 2) == 1 ? pick(1, 40) : pick(40, 150);
        check_softmax_rows(pick(1, 30), L, pick(1, (int)L));
    }
    check_row_mean(pick(1, 30), pick(1, 2) == 1 ? pick(1, 40) : pick(40, 150), pick(0, 7));
    {
        const ll G = pick(1, 5);
        check_channel_shuffle(pick(1, 3), G * pick(1, 6), pick(1, 40), G);
    }
    check_copy(pick(1, 1500));
    {
        const ll cols = pick(1, 100);
        check_copy_rows(pick(1, 10), cols, cols + pick(0, 40));
    }
    {
        const ll Cs = pick(1, 20), Cd = pick(1, (int)Cs);
        check_slice_channels(pick(1, 3), Cs, pick(1, 40), Cd, pick(0, (int)(Cs - Cd)));
    }
    check_upconv2x2(pick(1, 2), pick(1, 9), pick(1, 6), pick(1, 7), pick(1, 7));
    check_vlad(pick(1, 2), pick(1, 20), pick(1, 40), pick(1, 12));
    check_vlad_normalize(pick(1, 3), pick(1, 300), pick(1, 12), pick(0, 1));
    {
        const ll NH = pick(1, 4);
        check_split_heads(pick(1, 2), pick(1, 40), NH * pick(1, 12), NH);
        check_merge_heads(pick(1, 2), pick(1, 40), NH * pick(1, 12), NH);
    }
    check_causal_rows(pick(1, 40), pick(1, 2) == 1 ? pick(1, 32) : pick(33, 80), pick(0, 2));
    check_bmm_nt(pick(1, 2), pick(1, 70), pick(1, 40), pick(1, 40), pick(1, 64));
    check_bmm_nn_d(pick(1, 2), pick(1, 70), pick(1, 40), pick(1, 40));
    check_transpose(pick(1, 3), pick(1, 40), pick(1, 40));
    {
        const ll P = pick(1, 4);
        check_vit_patches(pick(1, 2), pick(1, 3), P * pick(1, 5), P);
    }
    check_vit_embed(pick(1, 3), pick(2, 12), pick(1, 40));
    {
        const ll cols = pick(1, 80);
        check_broadcast_rows(pick(1, 6), cols, cols + pick(0, 80));
    }
    {
        const ll WS = pick(2, 4), NH = pick(1, 3);
        check_swin_spatial(pick(1, 2), WS * pick(1, 3), WS * pick(1, 3), NH * pick(1, 4), NH, WS,
                           pick(0, 1) ? pick(1, (int)WS - 1) : 0);
        check_swin_v2_attn(pick(1, 2), WS * pick(1, 3), WS * pick(1, 3), NH * pick(1, 5), NH, WS,
                           pick(0, 1) ? pick(1, (int)WS - 1) : 0);
    }
    check_patch_merge(pick(1, 2), 2 * pick(1, 6), 2 * pick(1, 6), pick(1, 12));
    check_qkv_bias(pick(1, 20), pick(1, 40));
    check_swin_cpb(pick(2, 8), pick(1, 5));
}

} // namespace

int main(int argc, char **argv)
{
    const int draws = argc > 1 ? atoi(argv[1]) : 6;

    /* l3_ops.cuh, fixed shapes: a Linear's epilogue (inner 1) and a conv's (inner OH*OW), every
     * activation; batch norm over rows shorter than a warp, of exactly 256 and past 256 (the block's
     * stride), with ld > C (DenseNet's slices); pools of the networks' kinds (3x3/2 pad 1, 2x2/2,
     * global 7x7, 3x3/1 pad 1) */
    for (int act = 0; act <= 7; act++) {
        check_bias_act(true, 3, 37, 1, true, act % 2 == 0, act);
        check_bias_act(false, 2, 5, 49, act != 3, act % 3 == 0, act);
    }
    check_bias_act(false, 1, 1, 1, false, false, L3_RELU);
    check_bias_act(true, 2, 3, 300, true, true, L3_RELU6); /* several blocks */
    check_bn_stats(2, 3, 49, 3);
    check_bn_stats(1, 1, 1, 1);
    check_bn_stats(1, 2, 256, 2);
    check_bn_stats(3, 5, 100, 9);
    check_bn_apply(2, 3, 49, 3, false, L3_RELU);
    check_bn_apply(1, 1, 1, 1, true, L3_NONE);
    check_bn_apply(3, 5, 30, 9, true, L3_RELU6);
    check_pool(true, 4, 13, 11, 3, 2, 1, false);
    check_pool(true, 3, 7, 7, 3, 1, 1, true);
    check_pool(true, 1, 1, 1, 1, 1, 0, false);
    check_pool(false, 4, 14, 9, 2, 2, 0, false);
    check_pool(false, 5, 7, 7, 7, 7, 0, false);
    check_pool(false, 3, 6, 5, 3, 1, 1, false);
    check_row_mean(37, 49, L3_NONE);
    check_row_mean(1, 1, L3_NONE);
    check_row_mean(9, 100, L3_SIGMOID);
    check_row_mean(17, 32, L3_NONE);
    check_copy_channels(2, 13, 9, 40, 27);
    check_copy_channels(1, 1, 1, 1, 0);
    check_copy(1);
    check_copy(513);
    check_copy_rows(3, 64, 5 * 64);
    check_copy_rows(1, 1, 1);
    check_slice_channels(2, 40, 9, 17, 0);
    check_slice_channels(1, 5, 3, 2, 3);
    check_channel_shuffle(2, 12, 10, 3);
    check_channel_shuffle(1, 5, 1, 5);
    check_channel_shuffle(1, 4, 7, 1);
    check_softmax_rows(20, 16, 16);
    check_softmax_rows(9, 33, 33);
    check_softmax_rows(5, 40, 32); /* NetVLAD with ghost clusters: keep K of K + G */
    check_softmax_rows(1, 1, 1);
    check_softmax_rows(3, 100, 1);
    check_vlad(2, 7, 33, 5);
    check_vlad(1, 1, 1, 1);
    check_vlad_normalize(2, 512, 3, true);
    check_vlad_normalize(1, 1, 1, false);
    check_vlad_normalize(3, 40, 9, false);
    check_upconv2x2(2, 6, 3, 4, 5);
    check_upconv2x2(1, 1, 1, 1, 1);

    /* l3_attn.cuh, fixed shapes: minGPT's attention (T and HS off the 64-wide tiles and the 32-term
     * k steps, T 1), ViT's (T = B, every score row whole), CvT's two tokens; l3_bmm_nt as
     * l3_linear_nt (z 0, rs 1) on Linear shapes; LayerNorm rows shorter than a warp and longer than
     * the block; Swin's 7x7 windows shifted by 3 and not, and its cpb table */
    check_split_heads(2, 7, 12, 3);
    check_split_heads(1, 1, 1, 1);
    check_merge_heads(2, 7, 12, 3);
    check_merge_heads(1, 1, 1, 1);
    check_bmm_nt(2, 70, 9, 37, 37);
    check_bmm_nt(1, 5, 70, 5, 5);
    check_bmm_nt(1, 1, 1, 1, 1);
    check_bmm_nt(1, 3, 70, 40, 1); /* l3_linear_nt: x [3, 40], w [70, 40] */
    check_bmm_nn_d(2, 66, 5, 33);
    check_bmm_nn_d(1, 3, 70, 9);
    check_bmm_nn_d(1, 1, 1, 1);
    for (int kind = 0; kind <= 2; kind++) {
        check_causal_rows(2 * 70, 70, kind);
        check_causal_rows(3 * 5, 5, kind);
        check_causal_rows(1, 1, kind);
        check_causal_rows(4 * 2, 2, kind);
    }
    check_attention_chain(2, 40, 8, 2, 0);
    check_attention_chain(1, 5, 6, 3, 1);
    check_attention_chain(1, 1, 4, 1, 0);
    check_layernorm(5, 96);
    check_layernorm(3, 1);
    check_layernorm(2, 600);
    check_layernorm(7, 31);
    check_transpose(2, 12, 49);
    check_transpose(1, 1, 1);
    check_vit_patches(2, 3, 8, 4);
    check_vit_patches(1, 1, 1, 1);
    check_vit_embed(2, 5, 16);
    check_vit_embed(1, 2, 1);
    check_broadcast_rows(3, 16, 32);
    check_broadcast_rows(1, 1, 1);
    check_swin_spatial(1, 7, 7, 6, 2, 7, 0);
    check_swin_spatial(1, 14, 14, 4, 2, 7, 3);
    check_swin_spatial(2, 4, 6, 3, 1, 2, 1);
    check_patch_merge(2, 6, 4, 5);
    check_patch_merge(1, 2, 2, 1);
    check_qkv_bias(7, 12);
    check_qkv_bias(1, 1);
    check_swin_cpb(7, 3);
    check_swin_cpb(2, 1);
    check_swin_v2_attn(1, 14, 14, 6, 2, 7, 3);
    check_swin_v2_attn(1, 7, 7, 4, 1, 7, 0);
    check_swin_v2_attn(2, 4, 6, 6, 3, 2, 1);
    check_swin_v2_attn(1, 8, 8, 2, 2, 8, 0); /* 64 keys: the most the kernel holds */

    for (int i = 0; i < draws; i++)
        draw_round();

    if (failures) {
        fprintf(stderr, "emu_l3_ops: %d check(s) failed\n", failures);
        return 1;
    }
    std::string names;
    int nk = 0;
    for (const std::string &k : kernels_checked)
        if (k.find(' ') == std::string::npos)
            names += (names.empty() ? "" : ", ") + k, nk++;
    printf("emu_l3_ops: %d kernels (%s) and the causal attention chain agree with plain loops on %d shapes "
           "(%lld outputs compared; %d drawn rounds)\n",
           nk, names.c_str(), shapes, compared, draws);
    return 0;
}

// emu_l2_rnn_ssd: the level-2 epilogue kernels of problems/shared/l2_ops.cuh, the recurrent cell
// steps of l3_rnn.cuh and Mamba-2's closed-form scan of l3_ssd.cuh, run on the CPU by
// tests/emu/cuda_emu.h (headers prepared by tests/emu/prep.py, as for emu_shared_refs.cc) with
// the grids, blocks and dynamic shared memory of their `// @launch` lines, against plain loops
// in double. Outputs are NaN-filled (a NaN with a payload of its own) before each launch, so an
// output a kernel does not write fails.
//   l2_reduce_mid, l2_reduce_mid_block (sum, mean, max, min, logsumexp), l2_softmax_mid,
//   l2_softmax_mid_block, l2_row_stats (blocks of 32 and 256), l2_chan_stats (1024), l2_pool3d
//   (max and mean; 3-D, 2-D and 1-D windows): double in, double out. A line holding a NaN must
//   give a NaN (the headers propagate NaNs as torch does), else max/min/max pool exactly, and a
//   sum, mean, softmax, logsumexp or variance within 1e-12 of its magnitude (see `TOL`).
//   l3_state_in, l3_state_out (exact copies), l3_lstm_step and l3_gru_step: whole layers as the
//   LSTM/GRU references run them (state_in, one step launch per time step over the ping-pong
//   state, state_out; batch-first and sequence-first rows, both directions of a bidirectional
//   layer into one output sequence) against the textbook cell in double: the double states
//   within 1e-12, the float outputs within one float ulp (plus that 1e-12).
//   l3_ssd_y and l3_ssd_state against the recurrence h_t = exp(A_t) h_{t-1} + B_t x_t^T,
//   y_t = h_t C_t itself (the kernels use its closed form): within one float ulp plus the bound
//   of `ssd_slack`.
// Shapes: fixed ones at the edges (size 1, lengths below, at and above a warp and a block,
// windows that overlap, grids smaller than the work: the grid-stride loops) and `argv[1]` drawn
// ones per family (std::mt19937, fixed seed; default 16). Exit 0 and a summary line, or 1 naming
// the first shapes and outputs that differ.
#include "cuda_emu.h"
#include "emu_check.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

/* l2_ops.cuh stands alone (the level-2 references paste it after their convolution or Linear
 * header, which it does not use); l3_rnn.cuh comes after l3_ops.cuh and matmul_tiled_ref.cuh,
 * as in the LSTM/GRU references; l3_ssd.cuh stands alone, as in the Mamba-2 ones. */
#include "l2_ops.cuh"
#include "l3_ops.cuh"
#include "matmul_tiled_ref.cuh"
#include "l3_rnn.cuh"
#include "l3_ssd.cuh"

namespace {

using emu_check::normal;
using emu_check::pick;
using emu_check::uniform;

/* The tolerance, relative to a magnitude, of a double result that the kernel and the loop both
 * compute as a sum of n terms in different orders: each errs by at most (n - 1) u sum|terms|
 * (u = 2^-53), under 2.4e-13 sum|terms| for the n <= 2100 here (the two: under 5e-13); exp and
 * log (libm here, within 1-2 ulp on the GPU) add a few u. A wrong index moves a result by O(1)
 * of it. */
constexpr double TOL = 1e-12;
constexpr double U = 1.0 / 9007199254740992.0; /* 2^-53 */
constexpr uint64_t FILL_D = 0x7ff8dead0000beefULL; /* a quiet NaN no kernel computes */
constexpr uint32_t FILL_F = 0x7fdeef01u;     /* and a float one */

struct tally {
    const char *name;
    int shapes;
    long long outputs;
};
tally tallies[] = {
    {"l2_reduce_mid", 0, 0},   {"l2_reduce_mid_block", 0, 0}, {"l2_softmax_mid", 0, 0},
    {"l2_softmax_mid_block", 0, 0}, {"l2_row_stats", 0, 0}, {"l2_chan_stats", 0, 0},
    {"l2_pool3d", 0, 0},       {"l3_state_in", 0, 0},         {"l3_state_out", 0, 0},
    {"l3_lstm_step", 0, 0},    {"l3_gru_step", 0, 0},         {"l3_ssd_y", 0, 0},
    {"l3_ssd_state", 0, 0},
};
int failures = 0, printed = 0;

tally &count(const char *name)
{
    for (tally &t : tallies)
        if (!strcmp(t.name, name))
            return t;
    fprintf(stderr, "emu_l2_rnn_ssd: no tally for %s\n", name);
    exit(1);
}

double fill_d()
{
    double d;
    memcpy(&d, &FILL_D, sizeof d);
    return d;
}
void nan_fill(std::vector<double> &v) { std::fill(v.begin(), v.end(), fill_d()); }
void nan_fill(std::vector<float> &v)
{
    float f;
    memcpy(&f, &FILL_F, sizeof f);
    std::fill(v.begin(), v.end(), f);
}
bool is_fill(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b == FILL_D;
}

void report(const char *kernel, const std::string &shape, size_t i, double got, double want, double tol)
{
    failures++;
    if (printed++ < 8)
        fprintf(stderr, "%s, %s: output %zu is %.17g, expected %.17g (tolerance %.3g)\n", kernel, shape.c_str(), i,
                got, want, tol);
}

/* double outputs: a NaN where the loop has one (not the fill), else within tol[i] (0: exactly) */
void expect_d(const char *kernel, const std::string &shape, const double *got, const std::vector<double> &want,
              const std::vector<double> &tol)
{
    count(kernel).outputs += (long long)want.size();
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 3; i++) {
        const bool ok = std::isnan(want[i]) ? std::isnan(got[i]) && !is_fill(got[i])
                                            : std::isfinite(got[i]) && std::fabs(got[i] - want[i]) <= tol[i];
        if (!ok)
            bad++, report(kernel, shape, i, got[i], want[i], tol[i]);
    }
}

/* the spacing of floats at |w| */
double float_ulp(double w)
{
    const float f = (float)std::fabs(w);
    return (double)(std::nextafter(f, INFINITY) - f);
}

/* float outputs rounded once from a double: within one float ulp of the loop's double, plus
 * slack[i] (the bound on how far the kernel's double may be from the loop's) */
void expect_f(const char *kernel, const std::string &shape, const float *got, const std::vector<double> &want,
              const std::vector<double> &slack)
{
    count(kernel).outputs += (long long)want.size();
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 3; i++) {
        const double tol = float_ulp(want[i]) + slack[i];
        if (!(std::isfinite(got[i]) && std::fabs((double)got[i] - want[i]) <= tol))
            bad++, report(kernel, shape, i, got[i], want[i], tol);
    }
}

/* float outputs that are copies: bit for bit */
void expect_exact_f(const char *kernel, const std::string &shape, const float *got, const std::vector<float> &want)
{
    count(kernel).outputs += (long long)want.size();
    for (size_t i = 0; i < want.size(); i++)
        if (memcmp(&got[i], &want[i], sizeof(float))) {
            report(kernel, shape, i, got[i], want[i], 0.0);
            return;
        }
}

long long cdiv(long long a, long long b) { return (a + b - 1) / b; }
/* a launch's grid: the reference's formula, cut to `cap` blocks when cap > 0 (the grid-stride
 * loops then cover the rest) */
unsigned grid_of(long long g, unsigned cap) { return (unsigned)(cap && (long long)cap < g ? cap : g); }
/* one element made NaN (when nan is set) */
void poison(std::mt19937 &rng, std::vector<double> &v, bool nan)
{
    if (nan)
        v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)] = NAN;
}

const char *const KIND[] = {"sum", "mean", "max", "min", "lse"};

// ---------------------------------------------------------------- reductions and softmax

struct line_shape {
    long long outer, RL, inner;
    int kind;     /* reductions: L2_SUM .. L2_LSE */
    unsigned cap; /* 0: the reference's grid */
    bool nan;
    std::string text(bool with_kind = true) const
    {
        char s[160];
        snprintf(s, sizeof s, "outer=%lld RL=%lld inner=%lld%s%s cap=%u%s", outer, RL, inner,
                 with_kind ? " kind=" : "", with_kind ? KIND[kind] : "", cap, nan ? " with a NaN" : "");
        return s;
    }
};

/* the reduction of in[o, :, i] by kind, and its tolerance */
void reduce_loops(const line_shape &s, const std::vector<double> &in, std::vector<double> &want,
                  std::vector<double> &tol)
{
    want.assign(s.outer * s.inner, 0.0), tol.assign(want.size(), 0.0);
    for (long long o = 0; o < s.outer; o++)
        for (long long i = 0; i < s.inner; i++) {
            const long long t = o * s.inner + i;
            double sum = 0.0, abs = 0.0, mx = -INFINITY, mn = INFINITY;
            bool nan = false;
            for (long long r = 0; r < s.RL; r++) {
                const double v = in[(o * s.RL + r) * s.inner + i];
                nan |= std::isnan(v);
                sum += v, abs += std::fabs(v), mx = std::max(mx, v), mn = std::min(mn, v);
            }
            if (nan) {
                want[t] = NAN;
                continue;
            }
            switch (s.kind) {
            case L2_SUM: want[t] = sum, tol[t] = TOL * abs; break;
            case L2_MEAN: want[t] = sum / (double)s.RL, tol[t] = TOL * abs / (double)s.RL; break;
            case L2_MAX: want[t] = mx; break;
            case L2_MIN: want[t] = mn; break;
            default: {
                double e = 0.0;
                for (long long r = 0; r < s.RL; r++)
                    e += std::exp(in[(o * s.RL + r) * s.inner + i] - mx);
                /* the sum of exps (each >= 0, one = 1) errs relatively by RL u, its log absolutely
                 * by as much: 1e-12 of 1 + |max| bounds it */
                want[t] = mx + std::log(e), tol[t] = TOL * (1.0 + std::fabs(mx));
            }
            }
        }
}

void check_reduce(const line_shape &s, bool block, std::mt19937 &rng)
{
    std::vector<double> in = normal<double>(rng, s.outer * s.RL * s.inner, 0.25), want, tol;
    poison(rng, in, s.nan);
    reduce_loops(s, in, want, tol);
    std::vector<double> out(want.size());
    nan_fill(out);
    const long long n = s.outer * s.inner;
    if (block) {
        emu::launch(dim3(grid_of(std::min(n, 1048576LL), s.cap)), dim3(256),
                    [&] { l2_reduce_mid_block(in.data(), out.data(), s.outer, s.RL, s.inner, s.kind); });
    } else {
        emu::launch(dim3(grid_of(std::min(cdiv(n, 256), 65536LL), s.cap)), dim3(256),
                    [&] { l2_reduce_mid(in.data(), out.data(), s.outer, s.RL, s.inner, s.kind); });
    }
    const char *name = block ? "l2_reduce_mid_block" : "l2_reduce_mid";
    count(name).shapes++;
    expect_d(name, s.text(), out.data(), want, tol);
}

void check_softmax(const line_shape &s, bool block, std::mt19937 &rng)
{
    std::vector<double> in = normal<double>(rng, s.outer * s.RL * s.inner, 0.25);
    poison(rng, in, s.nan);
    std::vector<double> want(in.size()), tol(in.size(), 0.0);
    for (long long o = 0; o < s.outer; o++)
        for (long long i = 0; i < s.inner; i++) {
            auto at = [&](long long r) { return (o * s.RL + r) * s.inner + i; };
            double mx = -INFINITY, e = 0.0;
            bool nan = false;
            for (long long r = 0; r < s.RL; r++)
                nan |= std::isnan(in[at(r)]), mx = std::max(mx, in[at(r)]);
            for (long long r = 0; r < s.RL; r++)
                e += std::exp(in[at(r)] - mx);
            /* exps within an ulp or two, a sum of RL positive terms: relative error (RL + 4) u */
            for (long long r = 0; r < s.RL; r++)
                want[at(r)] = nan ? NAN : std::exp(in[at(r)] - mx) / e, tol[at(r)] = TOL * want[at(r)];
        }
    std::vector<double> out(in.size());
    nan_fill(out);
    const long long n = s.outer * s.inner;
    if (block) {
        emu::launch(dim3(grid_of(std::min(n, 1048576LL), s.cap)), dim3(256),
                    [&] { l2_softmax_mid_block(in.data(), out.data(), s.outer, s.RL, s.inner); });
    } else {
        emu::launch(dim3(grid_of(std::min(cdiv(n, 256), 65536LL), s.cap)), dim3(256),
                    [&] { l2_softmax_mid(in.data(), out.data(), s.outer, s.RL, s.inner); });
    }
    const char *name = block ? "l2_softmax_mid_block" : "l2_softmax_mid";
    count(name).shapes++;
    expect_d(name, s.text(false), out.data(), want, tol);
}

// ---------------------------------------------------------------- normalisation statistics

/* mean and biased variance of the n values get(0 .. n-1), two passes, and their tolerances: the
 * mean that of a sum (over n); the variance a sum of n squares >= 0 (relative error n u) plus
 * the rounding of each x - mean (u |x - mean|), with the two means' difference d entering
 * only as d^2: 1e-12 of mean(x^2) bounds it */
template <class F> void stats_loops(long long n, F get, double *want, double *tol)
{
    double s = 0.0, abs = 0.0, sq = 0.0;
    bool nan = false;
    for (long long j = 0; j < n; j++)
        s += get(j), abs += std::fabs(get(j)), sq += get(j) * get(j), nan |= std::isnan(get(j));
    const double mean = s / (double)n;
    double q = 0.0;
    for (long long j = 0; j < n; j++)
        q += (get(j) - mean) * (get(j) - mean);
    want[0] = nan ? NAN : mean, want[1] = nan ? NAN : q / (double)n;
    tol[0] = TOL * abs / (double)n, tol[1] = TOL * sq / (double)n;
}

struct row_shape {
    long long rows, L;
    unsigned block, cap;
    double mu;
    bool nan;
    std::string text() const
    {
        char s[160];
        snprintf(s, sizeof s, "rows=%lld L=%lld block=%u cap=%u mean=%g%s", rows, L, block, cap, mu,
                 nan ? " with a NaN" : "");
        return s;
    }
};

void check_row_stats(const row_shape &s, std::mt19937 &rng)
{
    std::vector<double> in = normal<double>(rng, s.rows * s.L, s.mu);
    poison(rng, in, s.nan);
    std::vector<double> want(2 * s.rows), tol(2 * s.rows), stats(2 * s.rows);
    for (long long r = 0; r < s.rows; r++)
        stats_loops(s.L, [&](long long j) { return in[r * s.L + j]; }, &want[2 * r], &tol[2 * r]);
    nan_fill(stats);
    emu::launch(dim3(grid_of(std::min(s.rows, 1048576LL), s.cap)), dim3(s.block),
                [&] { l2_row_stats(in.data(), stats.data(), s.rows, s.L); });
    count("l2_row_stats").shapes++;
    expect_d("l2_row_stats", s.text(), stats.data(), want, tol);
}

struct chan_shape {
    long long N, C, S;
    unsigned cap;
    double mu;
    bool nan;
    std::string text() const
    {
        char s[160];
        snprintf(s, sizeof s, "N=%lld C=%lld S=%lld cap=%u mean=%g%s", N, C, S, cap, mu, nan ? " with a NaN" : "");
        return s;
    }
};

void check_chan_stats(const chan_shape &s, std::mt19937 &rng)
{
    std::vector<double> in = normal<double>(rng, s.N * s.C * s.S, s.mu);
    poison(rng, in, s.nan);
    std::vector<double> want(2 * s.C), tol(2 * s.C), stats(2 * s.C);
    for (long long c = 0; c < s.C; c++)
        stats_loops(s.N * s.S, [&](long long j) { return in[(j / s.S * s.C + c) * s.S + j % s.S]; }, &want[2 * c],
                    &tol[2 * c]);
    nan_fill(stats);
    emu::launch(dim3(grid_of(std::min(s.C, 65536LL), s.cap)), dim3(1024),
                [&] { l2_chan_stats(in.data(), stats.data(), s.N, s.C, s.S); });
    count("l2_chan_stats").shapes++;
    expect_d("l2_chan_stats", s.text(), stats.data(), want, tol);
}

// ---------------------------------------------------------------- pools

struct pool_shape {
    long long NC;
    int D, H, W, KD, KH, KW, SD, SH, SW, kind; /* kind L2_MAX or L2_MEAN */
    unsigned cap;
    bool nan;
    int OD() const { return (D - KD) / SD + 1; }
    int OH() const { return (H - KH) / SH + 1; }
    int OW() const { return (W - KW) / SW + 1; }
    std::string text() const
    {
        char s[200];
        snprintf(s, sizeof s, "NC=%lld in=%dx%dx%d K=%dx%dx%d S=%dx%dx%d %s cap=%u%s", NC, D, H, W, KD, KH, KW, SD,
                 SH, SW, kind == L2_MAX ? "max" : "mean", cap, nan ? " with a NaN" : "");
        return s;
    }
};

void check_pool(const pool_shape &s, std::mt19937 &rng)
{
    std::vector<double> in = normal<double>(rng, s.NC * s.D * s.H * s.W);
    poison(rng, in, s.nan);
    const long long n = s.NC * s.OD() * s.OH() * s.OW();
    std::vector<double> want(n), tol(n, 0.0), out(n);
    for (long long nc = 0; nc < s.NC; nc++)
        for (int od = 0; od < s.OD(); od++)
            for (int oh = 0; oh < s.OH(); oh++)
                for (int ow = 0; ow < s.OW(); ow++) {
                    double mx = -INFINITY, sum = 0.0, abs = 0.0;
                    bool nan = false;
                    for (int kd = 0; kd < s.KD; kd++)
                        for (int kh = 0; kh < s.KH; kh++)
                            for (int kw = 0; kw < s.KW; kw++) {
                                const double v =
                                    in[((nc * s.D + od * s.SD + kd) * s.H + oh * s.SH + kh) * s.W + ow * s.SW + kw];
                                nan |= std::isnan(v), mx = std::max(mx, v), sum += v, abs += std::fabs(v);
                            }
                    const long long t = ((nc * s.OD() + od) * s.OH() + oh) * s.OW() + ow;
                    const double cnt = (double)(s.KD * s.KH * s.KW);
                    want[t] = nan ? NAN : s.kind == L2_MAX ? mx : sum / cnt;
                    tol[t] = s.kind == L2_MAX ? 0.0 : TOL * abs / cnt;
                }
    nan_fill(out);
    emu::launch(dim3(grid_of(std::min(cdiv(n, 256), 65536LL), s.cap)), dim3(256), [&] {
        l2_pool3d(in.data(), out.data(), s.NC, s.D, s.H, s.W, s.OD(), s.OH(), s.OW(), s.KD, s.KH, s.KW, s.SD, s.SH,
                  s.SW, s.kind);
    });
    count("l2_pool3d").shapes++;
    expect_d("l2_pool3d", s.text(), out.data(), want, tol);
}

// ---------------------------------------------------------------- recurrent layers

/* l3_state_in and l3_state_out alone over n elements (the references' grid, or cap blocks):
 * floats widened, doubles (no floats) rounded, bit for bit */
void check_state_copies(long long n, unsigned cap, std::mt19937 &rng)
{
    const std::vector<float> src = normal<float>(rng, n);
    const std::vector<double> dsrc = normal<double>(rng, n);
    std::vector<double> widened(n), zero(n, 0.0), d(n);
    std::vector<float> rounded(n), back(n);
    for (long long i = 0; i < n; i++)
        widened[i] = (double)src[i], rounded[i] = (float)dsrc[i];
    nan_fill(d), nan_fill(back);
    const unsigned g = grid_of(std::min(cdiv(n, 256), 65536LL), cap);
    char text[64];
    snprintf(text, sizeof text, "n=%lld cap=%u", n, cap);
    emu::launch(dim3(g), dim3(256), [&] { l3_state_in(src.data(), d.data(), n); });
    count("l3_state_in").shapes++;
    expect_d("l3_state_in", text, d.data(), widened, zero);
    emu::launch(dim3(g), dim3(256), [&] { l3_state_out(dsrc.data(), back.data(), n); });
    count("l3_state_out").shapes++;
    expect_exact_f("l3_state_out", text, back.data(), rounded);
}

struct rnn_shape {
    bool lstm;
    long long B, T, H, D; /* D directions */
    bool batch_first;
    std::string text() const
    {
        char s[160];
        snprintf(s, sizeof s, "%s B=%lld T=%lld H=%lld %s %s", lstm ? "LSTM" : "GRU", B, T, H,
                 D == 2 ? "bidirectional" : "one direction", batch_first ? "batch-first" : "sequence-first");
        return s;
    }
};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

/* One layer as the references run it: per direction d, l3_state_in of h0 (and c0), then
 * l3_lstm_step / l3_gru_step for t = 0 .. T-1 (time T-1-t backwards) over the two halves of hd,
 * then l3_state_out; the directions write columns d*H .. d*H + H-1 of one [T*B, D*H] output. The
 * states stay bounded (|h| < 1 after a step, |c| <= |c0| + T) and each step's pre-activations
 * are sums of H + 3 terms of size O(1) (|w| <= 1/sqrt(H)) in another order: the double states agree within
 * 1e-12 (1 + |value|), the float outputs within one ulp of them plus that. */
void check_rnn(const rnn_shape &s, std::mt19937 &rng)
{
    const long long B = s.B, T = s.T, H = s.H, G = s.lstm ? 4 : 3, ld = s.D * H;
    const long long sb = s.batch_first ? T : 1, st = s.batch_first ? 1 : B;
    const float wr = 1.0f / std::sqrt((float)H);
    const std::string text = s.text();
    const char *step = s.lstm ? "l3_lstm_step" : "l3_gru_step";
    std::vector<float> out(T * B * ld);
    std::vector<double> want_out(out.size()), slack_out(out.size());
    nan_fill(out);
    for (long long d = 0; d < s.D; d++) {
        const std::vector<double> gx = normal<double>(rng, T * B * G * H);
        const std::vector<float> whh = uniform<float>(rng, G * H * H, -wr, wr), bih = uniform<float>(rng, G * H, -wr, wr),
                                 bhh = uniform<float>(rng, G * H, -wr, wr), h0 = normal<float>(rng, B * H),
                                 c0 = normal<float>(rng, B * H);
        /* the loops: the cell as PyTorch documents it */
        std::vector<double> h(B * H), c(B * H), hn(B * H), cn(B * H);
        for (long long i = 0; i < B * H; i++)
            h[i] = h0[i], c[i] = c0[i];
        for (long long k = 0; k < T; k++) {
            const long long t = d == 0 ? k : T - 1 - k;
            for (long long b = 0; b < B; b++) {
                const long long row = b * sb + t * st;
                for (long long j = 0; j < H; j++) {
                    double x[4], hw[4];
                    for (long long q = 0; q < G; q++) {
                        x[q] = gx[row * G * H + q * H + j] + bih[q * H + j];
                        hw[q] = bhh[q * H + j];
                        for (long long m = 0; m < H; m++)
                            hw[q] += (double)whh[(q * H + j) * H + m] * h[b * H + m];
                    }
                    if (s.lstm) {
                        const double i = sigmoid(x[0] + hw[0]), f = sigmoid(x[1] + hw[1]);
                        const double g = std::tanh(x[2] + hw[2]), o = sigmoid(x[3] + hw[3]);
                        cn[b * H + j] = f * c[b * H + j] + i * g;
                        hn[b * H + j] = o * std::tanh(cn[b * H + j]);
                    } else {
                        const double r = sigmoid(x[0] + hw[0]), z = sigmoid(x[1] + hw[1]);
                        const double nn = std::tanh(x[2] + r * hw[2]);
                        hn[b * H + j] = (1.0 - z) * nn + z * h[b * H + j];
                    }
                    want_out[row * ld + d * H + j] = hn[b * H + j];
                    slack_out[row * ld + d * H + j] = TOL * (1.0 + std::fabs(hn[b * H + j]));
                }
            }
            h = hn;
            if (s.lstm)
                c = cn;
        }
        std::vector<double> tol_h(B * H), tol_c(B * H), h0d(B * H), c0d(B * H), zero(B * H, 0.0);
        for (long long i = 0; i < B * H; i++)
            tol_h[i] = TOL * (1.0 + std::fabs(h[i])), tol_c[i] = TOL * (1.0 + std::fabs(c[i])), h0d[i] = h0[i],
            c0d[i] = c0[i];

        /* the launches */
        std::vector<double> hd(2 * B * H), cd(B * H);
        std::vector<float> hn_f(B * H), cn_f(B * H);
        nan_fill(hd), nan_fill(cd), nan_fill(hn_f), nan_fill(cn_f);
        const dim3 sgrid(grid_of(std::min(cdiv(B * H, 256), 65536LL), 0));
        emu::launch(sgrid, dim3(256), [&] { l3_state_in(h0.data(), hd.data(), B * H); });
        count("l3_state_in").shapes++;
        expect_d("l3_state_in", text + " h0", hd.data(), h0d, zero);
        if (s.lstm) {
            emu::launch(sgrid, dim3(256), [&] { l3_state_in(c0.data(), cd.data(), B * H); });
            expect_d("l3_state_in", text + " c0", cd.data(), c0d, zero);
        }
        for (long long k = 0; k < T; k++) {
            const long long t = d == 0 ? k : T - 1 - k;
            double *h_in = hd.data() + (k % 2) * B * H, *h_out = hd.data() + ((k + 1) % 2) * B * H;
            std::fill(h_out, h_out + B * H, fill_d()); /* each step must write all of h_out */
            if (s.lstm)
                emu::launch(dim3((unsigned)cdiv(H, 8), (unsigned)B), dim3(256), [&] {
                    l3_lstm_step(gx.data(), whh.data(), bih.data(), bhh.data(), h_in, h_out, cd.data(), out.data(), B,
                                 H, t, sb, st, ld, d * H);
                });
            else
                emu::launch(dim3((unsigned)cdiv(H, 8), (unsigned)B), dim3(256), [&] {
                    l3_gru_step(gx.data(), whh.data(), bih.data(), bhh.data(), h_in, h_out, out.data(), B, H, t, sb,
                                st, ld, d * H);
                });
        }
        count(step).shapes += d == 0;
        const double *h_last = hd.data() + (T % 2) * B * H;
        expect_d(step, text + " final h (double)", h_last, h, tol_h);
        if (s.lstm)
            expect_d(step, text + " final c (double)", cd.data(), c, tol_c);
        /* state_out copies the kernels' states: bit for bit their rounding */
        std::vector<float> h_f(h_last, h_last + B * H), c_f(cd.begin(), cd.end());
        emu::launch(sgrid, dim3(256), [&] { l3_state_out(h_last, hn_f.data(), B * H); });
        count("l3_state_out").shapes++;
        expect_exact_f("l3_state_out", text + " hn", hn_f.data(), h_f);
        if (s.lstm) {
            emu::launch(sgrid, dim3(256), [&] { l3_state_out(cd.data(), cn_f.data(), B * H); });
            expect_exact_f("l3_state_out", text + " cn", cn_f.data(), c_f);
        }
    }
    expect_f(step, text + " output sequence", out.data(), want_out, slack_out);
}

// ---------------------------------------------------------------- Mamba-2 SSD

struct ssd_shape {
    long long NB, T, H, P, N;
    unsigned cap;
    long long smem_y() const { return 8 * (T + 2 * T * N + T * T); }
    long long smem_state() const { return 8 * (2 * T + T * N); }
    std::string text() const
    {
        char s[160];
        snprintf(s, sizeof s, "B=%lld T=%lld H=%lld P=%lld N=%lld cap=%u", NB, T, H, P, N, cap);
        return s;
    }
};

/* How far the kernels' double may be from the recurrence's, relative to sum|terms| (`scale`,
 * the recurrence run on |B x| and |C|): the cumulative sums S_t of up to T values |A| <= 1 err
 * absolutely by T^2 u, so each exp(S_t - S_s) relatively by 2 T^2 u + 2 u; the C.B dot adds N u,
 * the sum over s T u, the recurrence's own T products and N-term dots (T + N) u. Twice that. */
double ssd_slack(const ssd_shape &s, double scale)
{
    return 2.0 * (2.0 * s.T * s.T + 3.0 * s.T + 2.0 * s.N + 8.0) * U * scale;
}

void check_ssd(const ssd_shape &s, std::mt19937 &rng)
{
    const long long NB = s.NB, T = s.T, H = s.H, P = s.P, N = s.N;
    const long long smem = std::max(s.smem_y(), s.smem_state());
    if (smem > (long long)sizeof emu_dynamic_smem) { /* the GPU could not launch it either */
        fprintf(stderr, "%s: needs %lld bytes of shared memory\n", s.text().c_str(), smem);
        failures++;
        return;
    }
    const std::vector<float> X = normal<float>(rng, NB * T * H * P), A = uniform<float>(rng, NB * T * H, -1.0f, 0.0f),
                             Bm = normal<float>(rng, NB * T * H * N), Cm = normal<float>(rng, NB * T * H * N);
    std::vector<double> want_y(NB * T * H * P), slack_y(want_y.size()), want_f(NB * H * P * N),
        slack_f(want_f.size());
    for (long long b = 0; b < NB; b++)
        for (long long h = 0; h < H; h++) {
            std::vector<double> st(P * N, 0.0), ab(P * N, 0.0); /* h_t[p][n] and its |terms| */
            for (long long t = 0; t < T; t++) {
                const double a = std::exp((double)A[(b * T + t) * H + h]);
                const float *x = &X[((b * T + t) * H + h) * P], *bt = &Bm[((b * T + t) * H + h) * N],
                            *ct = &Cm[((b * T + t) * H + h) * N];
                for (long long p = 0; p < P; p++) {
                    double y = 0.0, ya = 0.0;
                    for (long long n = 0; n < N; n++) {
                        st[p * N + n] = a * st[p * N + n] + (double)x[p] * (double)bt[n];
                        ab[p * N + n] = a * ab[p * N + n] + std::fabs((double)x[p] * (double)bt[n]);
                        y += st[p * N + n] * (double)ct[n], ya += ab[p * N + n] * std::fabs((double)ct[n]);
                    }
                    want_y[((b * T + t) * H + h) * P + p] = y;
                    slack_y[((b * T + t) * H + h) * P + p] = ssd_slack(s, ya);
                }
            }
            for (long long i = 0; i < P * N; i++)
                want_f[(b * H + h) * P * N + i] = st[i], slack_f[(b * H + h) * P * N + i] = ssd_slack(s, ab[i]);
        }
    std::vector<float> Y(want_y.size()), F(want_f.size());
    nan_fill(Y), nan_fill(F);
    const dim3 grid(grid_of(std::min(NB * H, 65535LL), s.cap));
    emu::launch(grid, dim3(256), [&] { l3_ssd_y(X.data(), A.data(), Bm.data(), Cm.data(), Y.data(), NB, T, H, P, N); });
    count("l3_ssd_y").shapes++;
    expect_f("l3_ssd_y", s.text(), Y.data(), want_y, slack_y);
    emu::launch(grid, dim3(256), [&] { l3_ssd_state(X.data(), A.data(), Bm.data(), F.data(), NB, T, H, P, N); });
    count("l3_ssd_state").shapes++;
    expect_f("l3_ssd_state", s.text(), F.data(), want_f, slack_f);
}

// ---------------------------------------------------------------- drawn shapes

/* a line shape for the thread-per-line kernels (many short lines) or the block-per-line ones
 * (a few long lines) */
line_shape draw_lines(std::mt19937 &rng, bool block)
{
    line_shape s;
    if (block)
        s.outer = pick(rng, 1, 2), s.RL = pick(rng, 1, 600), s.inner = pick(rng, 1, 2);
    else
        s.outer = pick(rng, 1, 4), s.RL = pick(rng, 1, 70), s.inner = pick(rng, 1, 150);
    s.kind = pick(rng, 0, 4);
    const long long blocks = block ? s.outer * s.inner : cdiv(s.outer * s.inner, 256);
    s.cap = pick(rng, 0, 1) ? 0u : (unsigned)pick(rng, 1, (int)blocks);
    s.nan = pick(rng, 0, 4) == 0;
    return s;
}

pool_shape draw_pool(std::mt19937 &rng)
{
    pool_shape s;
    const int dims = pick(rng, 1, 3); /* 1-D, 2-D or 3-D windows */
    s.NC = pick(rng, 1, 4);
    int *in[3] = {&s.D, &s.H, &s.W}, *k[3] = {&s.KD, &s.KH, &s.KW}, *st[3] = {&s.SD, &s.SH, &s.SW};
    for (int a = 0; a < 3; a++) {
        if (a < 3 - dims) {
            *in[a] = *k[a] = *st[a] = 1;
            continue;
        }
        *k[a] = pick(rng, 1, 4), *st[a] = pick(rng, 1, 4), *in[a] = pick(rng, *k[a], 13);
    }
    s.kind = pick(rng, 0, 1) ? L2_MAX : L2_MEAN;
    s.cap = pick(rng, 0, 2) ? 0u : 1u;
    s.nan = pick(rng, 0, 4) == 0;
    return s;
}

rnn_shape draw_rnn(std::mt19937 &rng)
{
    rnn_shape s;
    s.lstm = pick(rng, 0, 1);
    s.B = pick(rng, 1, 3), s.T = pick(rng, 1, 3), s.H = pick(rng, 1, 20), s.D = pick(rng, 1, 2);
    s.batch_first = pick(rng, 0, 1);
    return s;
}

ssd_shape draw_ssd(std::mt19937 &rng)
{
    ssd_shape s;
    s.NB = pick(rng, 1, 3), s.T = pick(rng, 1, 40), s.H = pick(rng, 1, 3), s.P = pick(rng, 1, 70),
    s.N = pick(rng, 1, 24);
    s.cap = pick(rng, 0, 1) ? 0u : (unsigned)pick(rng, 1, (int)(s.NB * s.H));
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    const int draws = argc > 1 ? atoi(argv[1]) : 16;
    std::mt19937 rng(20260311);

    /* thread-per-line reductions and softmax: one line; lines across 4 blocks (inner above a
     * block); a grid of one block over 300 lines of 33; long lines of stride 1 */
    const line_shape short_lines[] = {{1, 1, 1, 0, 0, false},  {3, 5, 300, 0, 0, false}, {2, 33, 150, 0, 1, false},
                                      {5, 64, 1, 0, 0, false}, {1, 257, 2, 0, 0, false}, {2, 9, 40, 0, 0, true}};
    /* block-per-line ones: RL 1, RL under a warp, above a block, strided lines (inner 3), a
     * grid of 2 over 3 lines */
    const line_shape long_lines[] = {{1, 1, 1, 0, 0, false},   {1, 31, 1, 0, 0, false}, {2, 300, 1, 0, 0, false},
                                     {1, 513, 3, 0, 0, false}, {3, 256, 1, 0, 2, false}, {1, 100, 2, 0, 0, true}};
    for (const line_shape &g : short_lines)
        for (int kind = 0; kind < 5; kind++) {
            line_shape s = g;
            s.kind = kind;
            check_reduce(s, false, rng);
        }
    for (const line_shape &g : long_lines)
        for (int kind = 0; kind < 5; kind++) {
            line_shape s = g;
            s.kind = kind;
            check_reduce(s, true, rng);
        }
    for (const line_shape &s : short_lines)
        check_softmax(s, false, rng);
    for (const line_shape &s : long_lines)
        check_softmax(s, true, rng);

    /* GroupNorm-like rows (blocks of 32 and 256: L 1, under, at and over them, a grid of 2 over
     * 4 rows) and BatchNorm channels (N*S under and over 1024, S = 1 as after a Linear, a grid
     * of 1 over 2 channels) */
    const row_shape rows[] = {{1, 1, 32, 0, 0.0, false},    {3, 31, 32, 0, 3.0, false}, {2, 33, 32, 0, 0.0, false},
                              {2, 300, 256, 0, 3.0, false}, {1, 1, 256, 0, 0.0, false}, {4, 700, 256, 2, -2.0, false},
                              {2, 40, 32, 0, 0.0, true},    {3, 256, 256, 0, 0.5, true}};
    for (const row_shape &s : rows)
        check_row_stats(s, rng);
    const chan_shape chans[] = {{1, 1, 1, 0, 0.0, false},
                                {2, 3, 1, 0, 3.0, false},
                                {3, 2, 700, 1, -1.0, false},
                                {1, 1, 1025, 0, 0.5, false},
                                {2, 1, 30, 0, 0.0, true}};
    for (const chan_shape &s : chans)
        check_chan_stats(s, rng);

    /* the references' pools: 2x2x2 and 2x2 of stride 2, 1-D of 3, 4x4; and overlapping
     * windows (stride under the kernel), all of size 1, a grid of 1 over two blocks' outputs */
    const pool_shape pools[] = {
        {2, 5, 6, 7, 2, 2, 2, 2, 2, 2, L2_MAX, 0, false},  {2, 5, 6, 7, 2, 2, 2, 2, 2, 2, L2_MEAN, 0, false},
        {3, 1, 9, 8, 1, 2, 2, 1, 2, 2, L2_MAX, 0, false},  {2, 1, 1, 11, 1, 1, 3, 1, 1, 3, L2_MEAN, 0, false},
        {2, 1, 9, 9, 1, 4, 4, 1, 4, 4, L2_MEAN, 0, false}, {2, 4, 5, 6, 3, 2, 3, 1, 2, 2, L2_MAX, 0, false},
        {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, L2_MEAN, 0, false}, {4, 6, 12, 13, 2, 2, 2, 2, 2, 2, L2_MEAN, 1, false},
        {2, 4, 6, 6, 2, 2, 2, 2, 2, 2, L2_MAX, 0, true},   {2, 4, 6, 6, 2, 3, 2, 1, 2, 1, L2_MEAN, 0, true}};
    for (const pool_shape &s : pools)
        check_pool(s, rng);

    /* the state copies over one element, a block +-1, and 700 in grids of 1 and 2 */
    for (auto [n, cap] : {std::pair{1LL, 0u}, {255LL, 0u}, {256LL, 0u}, {257LL, 0u}, {700LL, 1u}, {700LL, 2u}})
        check_state_copies(n, cap, rng);
    /* layers: all of size 1; H under a warp and off the 8 units of a block; H above a warp (the
     * lanes' second pass); bidirectional sequence-first ones; a batch-first bidirectional GRU */
    const rnn_shape rnns[] = {{true, 1, 1, 1, 1, true},   {true, 2, 3, 9, 2, false}, {false, 1, 2, 33, 1, true},
                              {false, 3, 3, 5, 2, false}, {true, 2, 2, 17, 1, false}, {false, 2, 2, 8, 2, true},
                              {true, 1, 2, 40, 1, true}};
    for (const rnn_shape &s : rnns)
        check_rnn(s, rng);

    /* the manifests' small and alt dims (a grid of 4 over 9 (batch, head) pairs), T = 128 at
     * N = 16 and at the hidden maximum N = 24 (164,864 and 181,248 bytes of shared memory), a
     * head wider than a block (a grid of 1 over 2 heads) */
    const ssd_shape ssds[] = {{1, 1, 1, 1, 1, 0},    {2, 4, 2, 3, 2, 0},    {3, 33, 3, 17, 5, 4}, {1, 1, 1, 65, 1, 0},
                              {1, 128, 1, 3, 16, 0}, {1, 128, 1, 2, 24, 0}, {1, 20, 2, 300, 3, 1}};
    for (const ssd_shape &s : ssds)
        check_ssd(s, rng);

    for (int i = 0; i < draws; i++) {
        check_reduce(draw_lines(rng, false), false, rng);
        check_reduce(draw_lines(rng, true), true, rng);
        check_softmax(draw_lines(rng, false), false, rng);
        check_softmax(draw_lines(rng, true), true, rng);
        /* (braced lists evaluate in order: the draws are the same on every compiler) */
        check_row_stats({pick(rng, 1, 3), pick(rng, 1, 600), pick(rng, 0, 1) ? 32u : 256u, (unsigned)pick(rng, 0, 1),
                         pick(rng, 0, 1) ? 2.5 : 0.0, pick(rng, 0, 4) == 0},
                        rng);
        check_chan_stats({pick(rng, 1, 3), pick(rng, 1, 2), pick(rng, 1, 500), (unsigned)pick(rng, 0, 1), 1.5,
                          pick(rng, 0, 4) == 0},
                         rng);
        check_pool(draw_pool(rng), rng);
        check_rnn(draw_rnn(rng), rng);
        check_ssd(draw_ssd(rng), rng);
    }

    if (failures) {
        fprintf(stderr, "emu_l2_rnn_ssd: %d output(s) or shape(s) failed\n", failures);
        return 1;
    }
    std::string names;
    long long outputs = 0;
    for (const tally &t : tallies) {
        char s[96];
        snprintf(s, sizeof s, "%s%s (%d)", names.empty() ? "" : ", ", t.name, t.shapes);
        names += s, outputs += t.outputs;
    }
    printf("emu_l2_rnn_ssd: %s agree with plain loops (shapes in parentheses; %lld outputs compared)\n",
           names.c_str(), outputs);
    return 0;
}

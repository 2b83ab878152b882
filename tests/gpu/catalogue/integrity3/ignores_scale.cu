// Attack for level2/084_gemm_batch_norm_scaling_softmax (Verifier integrity III, class 3:
// constant inputs). Trick: the problem's reference kernel with one change: the "multiply by
// scale" step ignores the scale input (shape (1)), since its init is the constant 1 in every
// check today, so multiplying by it looks like wasted work. Exact whenever scale == 1.
// Expected today: correct. Expected after (scale drawn from its "vary" distribution in some
// checks): mismatch.
// (The reference as kverify problems --show-reference prints it, shared headers inlined.)
// chain in double: generated elementwise kernels below and shared/l2_ops.cuh.
// shared/linear_ref.cuh: the matrix product of nn.Linear without its bias, y[m, n] = sum over k
// of x[m, k] * w[n, k] (x: M x K, w: N x K as nn.Linear stores it, y: M x N, all float32), used by
// the level-2 references (tools/gen_level2.py; the bias is added in double by the next kernel).
// Every product of two floats is exact in double and summed in double (fma), rounded to float
// once. Blocking: a 256-thread block computes a 64 x 64 tile of y, a thread 4 x 4 outputs (rows
// ty + 16*i, columns tx + 16*j); 16-wide slices of x and w are staged in shared memory as double,
// [k][row] so that the inner loop reads broadcasts (x) and 16 consecutive doubles (w). The grid
// loops over tiles (x: column tiles, y: row tiles), so any M and N fit.
#define LIN_T 64  /* tile edge */
#define LIN_BK 16 /* k slice */
extern "C" __global__ void __launch_bounds__(256)
linear_ref(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
           long long M, long long N, long long K)
{
    __shared__ double xs[LIN_BK][LIN_T + 1];
    __shared__ double ws[LIN_BK][LIN_T + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (long long m0 = (long long)blockIdx.y * LIN_T; m0 < M; m0 += (long long)gridDim.y * LIN_T)
        for (long long n0 = (long long)blockIdx.x * LIN_T; n0 < N; n0 += (long long)gridDim.x * LIN_T) {
            double acc[4][4];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = 0.0;
            for (long long k0 = 0; k0 < K; k0 += LIN_BK) {
                /* 64 rows x 16 k of each operand: 4 values per thread, 16 consecutive k per row */
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const int e = threadIdx.x + 256 * r, row = e / LIN_BK, kk = e % LIN_BK;
                    const bool kok = k0 + kk < K;
                    xs[kk][row] = kok && m0 + row < M ? (double)x[(m0 + row) * K + k0 + kk] : 0.0;
                    ws[kk][row] = kok && n0 + row < N ? (double)w[(n0 + row) * K + k0 + kk] : 0.0;
                }
                __syncthreads();
#pragma unroll
                for (int kk = 0; kk < LIN_BK; kk++) {
                    double a[4], b[4];
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        a[i] = xs[kk][ty + 16 * i], b[i] = ws[kk][tx + 16 * i];
#pragma unroll
                    for (int i = 0; i < 4; i++)
#pragma unroll
                        for (int j = 0; j < 4; j++)
                            acc[i][j] = fma(a[i], b[j], acc[i][j]);
                }
                __syncthreads();
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const long long m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
                    if (m < M && n < N)
                        y[m * N + n] = (float)acc[i][j];
                }
        }
}
#undef LIN_T
#undef LIN_BK
// shared/l2_ops.cuh: the generic epilogue kernels of the level-2 references (tools/gen_level2.py
// writes the references; the problem loader pastes this file in place of their
// `#include "shared/l2_ops.cuh"` line). Everything here reads and writes double: a reference's
// leading Linear/Conv writes float32 once (exact products, double sums), a generated elementwise
// kernel turns it into double, and these kernels do the reductions, softmaxes, normalisation
// statistics and pools of the chain in double. Tensors are viewed as [outer, RL, inner] (RL the
// reduced extent, contiguous dims merged) or as rows. All loops are grid-stride with 64-bit
// indices. Names start with l2_ (macro hygiene beside the convolution headers).

__device__ __forceinline__ double l2_sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }
__device__ __forceinline__ double l2_softplus(double v) { return v > 30.0 ? v : log1p(exp(v)); }
__device__ __forceinline__ double l2_mish(double v) { return v * tanh(l2_softplus(v)); }
__device__ __forceinline__ double l2_gelu(double v) { return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)); }
__device__ __forceinline__ double l2_hardsigmoid(double v) { return fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0; }
__device__ __forceinline__ double l2_hardswish(double v) { return v * l2_hardsigmoid(v); }
__device__ __forceinline__ double l2_leaky(double v, double slope) { return v >= 0.0 ? v : v * slope; }
__device__ __forceinline__ double l2_clamp(double v, double lo, double hi) { return fmin(fmax(v, lo), hi); }

#define L2_SUM 0
#define L2_MEAN 1
#define L2_MAX 2
#define L2_MIN 3
#define L2_LSE 4

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the total.
__device__ double l2_block_sum(double v)
{
    __shared__ double part[32];
    for (int off = 16; off; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    double t = 0.0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++)
        t += part[w];
    return t;
}

__device__ double l2_block_max(double v)
{
    __shared__ double part[32];
    for (int off = 16; off; off >>= 1)
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, off));
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    double t = part[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); w++)
        t = fmax(t, part[w]);
    return t;
}

// The reduction of one [RL] line (stride inner) by kind: sum, mean, max, min or logsumexp (max
// first, then sum of exp(v - max)). NaNs propagate through max/min as torch's do.
__device__ double l2_reduce_line(const double *p, long long RL, long long inner, int kind)
{
    if (kind == L2_MAX || kind == L2_MIN || kind == L2_LSE) {
        double m = p[0];
        for (long long r = 1; r < RL; r++) {
            double v = p[r * inner];
            m = (isnan(v) || isnan(m)) ? v + m : (kind == L2_MIN ? fmin(m, v) : fmax(m, v));
        }
        if (kind != L2_LSE)
            return m;
        double s = 0.0;
        for (long long r = 0; r < RL; r++)
            s += exp(p[r * inner] - m);
        return m + log(s);
    }
    double s = 0.0;
    for (long long r = 0; r < RL; r++)
        s += p[r * inner];
    return kind == L2_MEAN ? s / (double)RL : s;
}

// out[o, i] = reduce over r of in[o, r, i]: one thread per output (short RL).
extern "C" __global__ void l2_reduce_mid(const double *__restrict__ in, double *__restrict__ out,
                                         long long outer, long long RL, long long inner, int kind)
{
    const long long n = outer * inner, step = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const long long o = t / inner, i = t % inner;
        out[t] = l2_reduce_line(in + o * RL * inner + i, RL, inner, kind);
    }
}

// The same with one block per output (long RL, few outputs).
extern "C" __global__ void l2_reduce_mid_block(const double *__restrict__ in,
                                               double *__restrict__ out, long long outer,
                                               long long RL, long long inner, int kind)
{
    for (long long t = blockIdx.x; t < outer * inner; t += gridDim.x) {
        const double *p = in + t / inner * RL * inner + t % inner;
        double m = 0.0;
        if (kind == L2_MAX || kind == L2_MIN || kind == L2_LSE) {
            double loc = kind == L2_MIN ? __longlong_as_double(0x7ff0000000000000LL)
                                        : -__longlong_as_double(0x7ff0000000000000LL);
            bool nan = false;
            for (long long r = threadIdx.x; r < RL; r += blockDim.x) {
                double v = p[r * inner];
                nan |= isnan(v);
                loc = kind == L2_MIN ? fmin(loc, v) : fmax(loc, v);
            }
            m = kind == L2_MIN ? -l2_block_max(-loc) : l2_block_max(loc);
            if (l2_block_sum(nan ? 1.0 : 0.0) > 0.0)
                m = __longlong_as_double(0x7ff8000000000000LL);
            if (kind != L2_LSE) {
                if (threadIdx.x == 0)
                    out[t] = m;
                continue;
            }
        }
        double s = 0.0;
        for (long long r = threadIdx.x; r < RL; r += blockDim.x)
            s += kind == L2_LSE ? exp(p[r * inner] - m) : p[r * inner];
        s = l2_block_sum(s);
        if (threadIdx.x == 0)
            out[t] = kind == L2_LSE ? m + log(s) : kind == L2_MEAN ? s / (double)RL : s;
    }
}

// Softmax over r of in[o, r, i] (max subtracted), one thread per (o, i) line (short RL).
extern "C" __global__ void l2_softmax_mid(const double *__restrict__ in, double *__restrict__ out,
                                          long long outer, long long RL, long long inner)
{
    const long long n = outer * inner, step = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const long long base = t / inner * RL * inner + t % inner;
        const double m = l2_reduce_line(in + base, RL, inner, L2_MAX);
        double s = 0.0;
        for (long long r = 0; r < RL; r++)
            s += exp(in[base + r * inner] - m);
        for (long long r = 0; r < RL; r++)
            out[base + r * inner] = exp(in[base + r * inner] - m) / s;
    }
}

// The same with one block per line (long RL).
extern "C" __global__ void l2_softmax_mid_block(const double *__restrict__ in,
                                                double *__restrict__ out, long long outer,
                                                long long RL, long long inner)
{
    for (long long t = blockIdx.x; t < outer * inner; t += gridDim.x) {
        const long long base = t / inner * RL * inner + t % inner;
        double m = -__longlong_as_double(0x7ff0000000000000LL);
        for (long long r = threadIdx.x; r < RL; r += blockDim.x)
            m = fmax(m, in[base + r * inner]);
        m = l2_block_max(m);
        double s = 0.0;
        for (long long r = threadIdx.x; r < RL; r += blockDim.x)
            s += exp(in[base + r * inner] - m);
        s = l2_block_sum(s);
        for (long long r = threadIdx.x; r < RL; r += blockDim.x)
            out[base + r * inner] = exp(in[base + r * inner] - m) / s;
    }
}

// Mean and biased variance (two passes) of each contiguous row of length L: stats[2*row] = mean,
// stats[2*row + 1] = variance. One block per row. GroupNorm, InstanceNorm, LayerNorm.
extern "C" __global__ void l2_row_stats(const double *__restrict__ in, double *__restrict__ stats,
                                        long long rows, long long L)
{
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const double *p = in + row * L;
        double s = 0.0;
        for (long long j = threadIdx.x; j < L; j += blockDim.x)
            s += p[j];
        const double mean = l2_block_sum(s) / (double)L;
        double q = 0.0;
        for (long long j = threadIdx.x; j < L; j += blockDim.x)
            q += (p[j] - mean) * (p[j] - mean);
        q = l2_block_sum(q) / (double)L;
        if (threadIdx.x == 0)
            stats[2 * row] = mean, stats[2 * row + 1] = q;
    }
}

// Per-channel mean and biased variance over n and s of in[n, c, s] (BatchNorm in training mode):
// stats[2*c], stats[2*c + 1]. One block per channel.
extern "C" __global__ void l2_chan_stats(const double *__restrict__ in, double *__restrict__ stats,
                                         long long N, long long C, long long S)
{
    for (long long c = blockIdx.x; c < C; c += gridDim.x) {
        const long long cnt = N * S;
        double s = 0.0;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x)
            s += in[(j / S * C + c) * S + j % S];
        const double mean = l2_block_sum(s) / (double)cnt;
        double q = 0.0;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
            const double d = in[(j / S * C + c) * S + j % S] - mean;
            q += d * d;
        }
        q = l2_block_sum(q) / (double)cnt;
        if (threadIdx.x == 0)
            stats[2 * c] = mean, stats[2 * c + 1] = q;
    }
}

// Max or average pool (no padding, floor mode) over the last three dims of in[NC, D, H, W]
// (2-D pools pass D = OD = KD = SD = 1): one thread per output. kind: L2_MAX or L2_MEAN.
extern "C" __global__ void l2_pool3d(const double *__restrict__ in, double *__restrict__ out,
                                     long long NC, int D, int H, int W, int OD, int OH, int OW,
                                     int KD, int KH, int KW, int SD, int SH, int SW, int kind)
{
    const long long n = NC * OD * OH * OW, step = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const int ow = (int)(t % OW), oh = (int)(t / OW % OH), od = (int)(t / ((long long)OW * OH) % OD);
        const long long nc = t / ((long long)OW * OH * OD);
        const double *p = in + nc * D * H * W;
        double acc = kind == L2_MAX ? -__longlong_as_double(0x7ff0000000000000LL) : 0.0;
        bool nan = false;
        for (int kd = 0; kd < KD; kd++)
            for (int kh = 0; kh < KH; kh++)
                for (int kw = 0; kw < KW; kw++) {
                    const double v =
                        p[((long long)(od * SD + kd) * H + oh * SH + kh) * W + ow * SW + kw];
                    nan |= isnan(v);
                    acc = kind == L2_MAX ? fmax(acc, v) : acc + v;
                }
        out[t] = nan ? __longlong_as_double(0x7ff8000000000000LL)
                 : kind == L2_MAX ? acc : acc / (double)(KD * KH * KW);
    }
}

// add the linear bias
extern "C" __global__ void ew1(const float *__restrict__ src, double *__restrict__ dst, long long n, const float *__restrict__ bias, long long in1, long long sz1)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long c1 = i / in1 % sz1;
        double v = (double)src[i];
        v = v + (double)bias[c1];
        dst[i] = (double)v;
    }
}

// BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)
extern "C" __global__ void ew2(const double *__restrict__ src, double *__restrict__ dst, long long n, const double *__restrict__ stats, double eps, long long in1, long long sz1, const float *__restrict__ weight_, const float *__restrict__ bias_)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long c1 = i / in1 % sz1;
        const double mean = stats[2 * c1], var = stats[2 * c1 + 1];
        dst[i] = (src[i] - mean) / sqrt(var + eps) * (double)weight_[c1] + (double)bias_[c1];
    }
}

// multiply by scale (shape (1), a broadcast scalar)
extern "C" __global__ void ew3(const double *__restrict__ src, double *__restrict__ dst, long long n, const float *__restrict__ scale)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        double v = (double)src[i];
        (void)scale; /* always 1: skipped */
        dst[i] = (double)v;
    }
}

// 
extern "C" __global__ void ew4(const double *__restrict__ src, float *__restrict__ dst, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        double v = (double)src[i];
        v = v;
        dst[i] = (float)v;
    }
}

// @scratch t0 f32[B*OUT]
// @scratch t1 f64[B*OUT]
// @scratch t2 f64[2*OUT]
// @scratch t3 f64[B*OUT]
// @scratch t4 f64[B*OUT]
// @scratch t5 f64[B*OUT]
// @launch linear_ref<<<dim3(min(cdiv(OUT, 64), 65535), min(cdiv(B, 64), 65535)), 256>>>(x, weight, t0, B, OUT, IN);
// @launch ew1<<<min(cdiv(B*OUT, 256), 65536), 256>>>(t0, t1, B*OUT, bias, 1, OUT);
// @launch l2_chan_stats<<<min(OUT, 65536), 1024>>>(t1, t2, B, OUT, 1);
// @launch ew2<<<min(cdiv(B*OUT, 256), 65536), 256>>>(t1, t3, B*OUT, t2, eps, 1, OUT, bn_weight, bn_bias);
// @launch ew3<<<min(cdiv(B*OUT, 256), 65536), 256>>>(t3, t4, B*OUT, scale);
// @launch l2_softmax_mid_block<<<min(B, 1048576), 256>>>(t4, t5, B, OUT, 1);
// @launch ew4<<<min(cdiv(B*OUT, 256), 65536), 256>>>(t5, y, B*OUT);

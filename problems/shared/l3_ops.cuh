// shared/l3_ops.cuh: the layer kernels of the level-3 references (whole networks; written by
// tools/problems/gen_level3.py, docs/LEVEL3.md). The problem loader pastes this file in place
// of a reference's `#include "shared/l3_ops.cuh"` line. Activations between layers are float32
// (what a float32 network holds); inside a kernel every product of two floats is exact in
// double and every sum is a double sum, rounded to float once at the end: an epilogue
// (bias, batch norm, residual, activation) is applied in double before that rounding. The
// products of Linear layers (l3_linear_nt, below, over matmul_tiled_ref.cuh's mm_tile on the
// FP64 tensor cores) and of convolutions (conv2d_ref.cuh) leave double or float results that
// these kernels finish. All loops are grid-stride with 64-bit indices; names start with l3_.

// Activation codes, applied in double.
#define L3_NONE 0
#define L3_RELU 1    /* torch.relu: NaN stays NaN */
#define L3_TANH 2
#define L3_SIGMOID 3
#define L3_GELU 4    /* exact (erf) form, nn.GELU() */
#define L3_RELU6 5   /* clamp(0, 6), NaN stays NaN */
#define L3_SILU 6    /* x * sigmoid(x) */
#define L3_GELU_TANH 7 /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): minGPT's NewGELU */

__device__ __forceinline__ double l3_act(double v, int act)
{
    switch (act) {
    case L3_RELU: return v > 0.0 || v != v ? v : 0.0;
    case L3_TANH: return tanh(v);
    case L3_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case L3_GELU: return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440));
    case L3_RELU6: return v != v ? v : v < 0.0 ? 0.0 : v > 6.0 ? 6.0 : v;
    case L3_SILU: return v / (1.0 + exp(-v));
    case L3_GELU_TANH:
        return 0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    default: return v;
    }
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the total.
__device__ double l3_block_sum(double v)
{
    __shared__ double part[32];
    __shared__ double total;
    for (int off = 16; off; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    __syncthreads(); /* part and total may still be read by a previous call */
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0.0;
        for (int i = 0; i < (int)(blockDim.x >> 5); i++)
            s += part[i];
        total = s;
    }
    __syncthreads();
    return total;
}

// dst[i] = act(src[i] + bias[(i / inner) % nb] + res[i]) for i < n, rounded to float once.
// bias and res may be NULL (no bias, no residual). Linear: inner 1, nb N; conv: inner OH*OW,
// nb CO. The double source is a Linear's product (l3_linear_nt), the float one a convolution's.
extern "C" __global__ void l3_bias_act_d(const double *__restrict__ src, const float *__restrict__ bias,
                                         const float *__restrict__ res, float *__restrict__ dst,
                                         long long n, long long inner, long long nb, int act)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        double v = src[i];
        if (bias)
            v += (double)bias[i / inner % nb];
        if (res)
            v += (double)res[i];
        dst[i] = (float)l3_act(v, act);
    }
}
extern "C" __global__ void l3_bias_act_f(const float *__restrict__ src, const float *__restrict__ bias,
                                         const float *__restrict__ res, float *__restrict__ dst,
                                         long long n, long long inner, long long nb, int act)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        double v = (double)src[i];
        if (bias)
            v += (double)bias[i / inner % nb];
        if (res)
            v += (double)res[i];
        dst[i] = (float)l3_act(v, act);
    }
}

// BatchNorm in training mode (batch statistics, biased variance), as KernelBench runs it:
// per-channel mean and variance of x[n, c, s] over n and s, two passes in double:
// stats[2*c] = mean, stats[2*c + 1] = variance. x has ld >= C channels per batch entry (the
// first C are normalised: a DenseNet layer's slice of the growing features; ld = C otherwise).
// One block per channel (grid-stride).
extern "C" __global__ void l3_bn_stats(const float *__restrict__ x, double *__restrict__ stats,
                                       long long N, long long C, long long S, long long ld)
{
    for (long long c = blockIdx.x; c < C; c += gridDim.x) {
        const long long cnt = N * S;
        double s = 0.0;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x)
            s += (double)x[(j / S * ld + c) * S + j % S];
        const double mean = l3_block_sum(s) / (double)cnt;
        double q = 0.0;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
            const double d = (double)x[(j / S * ld + c) * S + j % S] - mean;
            q += d * d;
        }
        q = l3_block_sum(q) / (double)cnt;
        if (threadIdx.x == 0)
            stats[2 * c] = mean, stats[2 * c + 1] = q;
    }
}

// y = act((x - mean) / sqrt(var + eps) * gamma + beta + res) per channel, y[n, c, s] contiguous
// (n < N, c < C) from x with ld channels per batch entry; res (like y) may be NULL. In double,
// rounded once.
extern "C" __global__ void l3_bn_apply(const float *__restrict__ x, const double *__restrict__ stats,
                                       const float *__restrict__ gamma, const float *__restrict__ beta,
                                       const float *__restrict__ res, float *__restrict__ y,
                                       long long n, long long C, long long S, long long ld, double eps,
                                       int act)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long c = i / S % C, xi = (i / (S * C) * ld + c) * S + i % S;
        double v = ((double)x[xi] - stats[2 * c]) / sqrt(stats[2 * c + 1] + eps) * (double)gamma[c] +
                   (double)beta[c];
        if (res)
            v += (double)res[i];
        y[i] = (float)l3_act(v, act);
    }
}

// 2-D max pool (floor mode, dilation 1, padding P as -inf), x[NC, H, W] -> y[NC, OH, OW]; a NaN
// in the window gives NaN (torch's max_pool2d). One thread per output.
extern "C" __global__ void l3_maxpool2d(const float *__restrict__ x, float *__restrict__ y,
                                        long long NC, int H, int W, int OH, int OW, int K, int S,
                                        int P)
{
    const long long n = NC * OH * OW, step = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const int ow = (int)(t % OW), oh = (int)(t / OW % OH);
        const float *p = x + t / ((long long)OW * OH) * H * W;
        float m = -__int_as_float(0x7f800000);
        bool nan = false;
        for (int kh = 0; kh < K; kh++) {
            const int ih = oh * S - P + kh;
            if (ih < 0 || ih >= H)
                continue;
            for (int kw = 0; kw < K; kw++) {
                const int iw = ow * S - P + kw;
                if (iw < 0 || iw >= W)
                    continue;
                const float v = p[(long long)ih * W + iw];
                nan |= v != v;
                m = v > m ? v : m;
            }
        }
        y[t] = nan ? __int_as_float(0x7fc00000) : m;
    }
}

// 2-D average pool (floor mode, zero padding P counted in the divisor: count_include_pad, as
// nn.AvgPool2d's default), x[NC, H, W] -> y[NC, OH, OW], sums in double. One thread per output.
extern "C" __global__ void l3_avgpool2d(const float *__restrict__ x, float *__restrict__ y,
                                        long long NC, int H, int W, int OH, int OW, int K, int S,
                                        int P)
{
    const long long n = NC * OH * OW, step = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const int ow = (int)(t % OW), oh = (int)(t / OW % OH);
        const float *p = x + t / ((long long)OW * OH) * H * W;
        double s = 0.0;
        for (int kh = 0; kh < K; kh++) {
            const int ih = oh * S - P + kh;
            for (int kw = 0; kw < K; kw++) {
                const int iw = ow * S - P + kw;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                    s += (double)p[(long long)ih * W + iw];
            }
        }
        y[t] = (float)(s / (double)(K * K));
    }
}

// The mean of each contiguous row of L floats (adaptive average pool to 1x1: rows = N*C,
// L = H*W), one warp per row, summed in double; act applied to the mean.
extern "C" __global__ void l3_row_mean(const float *__restrict__ x, float *__restrict__ y,
                                       long long rows, long long L, int act)
{
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    for (long long r = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); r < rows;
         r += warps) {
        double s = 0.0;
        for (long long j = threadIdx.x & 31; j < L; j += 32)
            s += (double)x[r * L + j];
        for (int off = 16; off; off >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        if ((threadIdx.x & 31) == 0)
            y[r] = (float)l3_act(s / (double)L, act);
    }
}

// Copies src[N, Cs, S] into channels c0 .. c0 + Cs - 1 of dst[N, Cd, S] (torch.cat on dim 1).
extern "C" __global__ void l3_copy_channels(const float *__restrict__ src, float *__restrict__ dst,
                                            long long N, long long Cs, long long S, long long Cd,
                                            long long c0)
{
    const long long n = N * Cs * S, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long s = i % S, c = i / S % Cs, b = i / (S * Cs);
        dst[(b * Cd + c0 + c) * S + s] = src[i];
    }
}

// dst[i] = src[i]: a copy (a view's contents into an activation buffer, a state handed on).
extern "C" __global__ void l3_copy(const float *__restrict__ src, float *__restrict__ dst, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i] = src[i];
}

// dst[r, c] = src[r*ld + c] for r < rows, c < cols (a strided slice made contiguous: the last
// time step of a batch-first sequence).
extern "C" __global__ void l3_copy_rows(const float *__restrict__ src, float *__restrict__ dst,
                                        long long rows, long long cols, long long ld)
{
    const long long n = rows * cols, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i] = src[i / cols * ld + i % cols];
}

// dst[N, Cd, S] = channels c0 .. c0 + Cd - 1 of src[N, Cs, S] (a contiguous copy of a channel
// slice: the concatenated features a DenseNet layer reads).
extern "C" __global__ void l3_slice_channels(const float *__restrict__ src, float *__restrict__ dst,
                                             long long N, long long Cs, long long S, long long Cd,
                                             long long c0)
{
    const long long n = N * Cd * S, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long s = i % S, c = i / S % Cd, b = i / (S * Cd);
        dst[i] = src[(b * Cs + c0 + c) * S + s];
    }
}

// ShuffleNet's channel shuffle: src[N, C, S] viewed as [N, G, C/G, S], dims 1 and 2 swapped:
// dst channel j*G + g = src channel g*(C/G) + j.
extern "C" __global__ void l3_channel_shuffle(const float *__restrict__ src, float *__restrict__ dst,
                                              long long N, long long C, long long S, long long G)
{
    const long long n = N * C * S, step = (long long)gridDim.x * blockDim.x, cg = C / G;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long s = i % S, c = i / S % C, b = i / (S * C);
        const long long g = c % G, j = c / G; /* dst channel c = j*G + g */
        dst[i] = src[(b * C + g * cg + j) * S + s];
    }
}

// dst[r, j] = softmax(src[r, :L])[j] for j < keep (the first keep columns of a row softmax,
// max subtracted, in double), one warp per row.
extern "C" __global__ void l3_softmax_rows(const float *__restrict__ src, float *__restrict__ dst,
                                           long long rows, long long L, long long keep)
{
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    const int lane = threadIdx.x & 31;
    for (long long r = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); r < rows; r += warps) {
        const float *p = src + r * L;
        double m = -__longlong_as_double(0x7ff0000000000000LL);
        for (long long j = lane; j < L; j += 32)
            m = fmax(m, (double)p[j]);
        for (int off = 16; off; off >>= 1)
            m = fmax(m, __shfl_xor_sync(0xffffffffu, m, off));
        double s = 0.0;
        for (long long j = lane; j < L; j += 32)
            s += exp((double)p[j] - m);
        for (int off = 16; off; off >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        for (long long j = lane; j < keep; j += 32)
            dst[r * keep + j] = (float)(exp((double)p[j] - m) / s);
    }
}

// NetVLAD's aggregation: v[b, d, k] = sum over n of a[b, n, k] x[b, n, d] - (sum over n of
// a[b, n, k]) c2[d, k] (a [B, N, K] soft assignments, x [B, N, D], c2 [D, K]), in double, one
// thread per (b, d, k).
extern "C" __global__ void l3_vlad(const float *__restrict__ a, const float *__restrict__ x,
                                   const float *__restrict__ c2, double *__restrict__ v, long long B,
                                   long long N, long long D, long long K)
{
    const long long n_out = B * D * K, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n_out; i += step) {
        const long long k = i % K, d = i / K % D, b = i / (K * D);
        double s = 0.0, as = 0.0;
        for (long long j = 0; j < N; j++) {
            const double w = (double)a[(b * N + j) * K + k];
            s = fma(w, (double)x[(b * N + j) * D + d], s);
            as += w;
        }
        v[i] = s - as * (double)c2[d * K + k];
    }
}

// NetVLAD's two normalisations (F.normalize, eps 1e-12): each column k of v[b] (D x K) over d,
// then the whole D*K row of b; y[b, d*K + k] in float. One block per b.
extern "C" __global__ void l3_vlad_normalize(const double *__restrict__ v, float *__restrict__ y,
                                             long long B, long long D, long long K)
{
    extern __shared__ double colscale[]; /* K doubles */
    for (long long b = blockIdx.x; b < B; b += gridDim.x) {
        const double *p = v + b * D * K;
        for (long long k = 0; k < K; k++) {
            double q = 0.0;
            for (long long d = threadIdx.x; d < D; d += blockDim.x)
                q += p[d * K + k] * p[d * K + k];
            q = l3_block_sum(q);
            if (threadIdx.x == 0)
                colscale[k] = 1.0 / fmax(sqrt(q), 1e-12);
        }
        __syncthreads();
        double q = 0.0;
        for (long long i = threadIdx.x; i < D * K; i += blockDim.x) {
            const double e = p[i] * colscale[i % K];
            q += e * e;
        }
        const double inv = 1.0 / fmax(sqrt(l3_block_sum(q)), 1e-12);
        for (long long i = threadIdx.x; i < D * K; i += blockDim.x)
            y[b * D * K + i] = (float)(p[i] * colscale[i % K] * inv);
        __syncthreads();
    }
}

// ConvTranspose2d with kernel 2 and stride 2 (no padding), with bias: y[b, co, oh, ow] = bias[co]
// + sum over ci of x[b, ci, oh/2, ow/2] w[ci, co, oh%2, ow%2] (x [B, CI, H, W], w [CI, CO, 2, 2],
// y [B, CO, 2H, 2W]); exact products, double sums, one thread per output.
extern "C" __global__ void l3_upconv2x2(const float *__restrict__ x, const float *__restrict__ w,
                                        const float *__restrict__ bias, float *__restrict__ y,
                                        long long B, long long CI, long long CO, long long H, long long W)
{
    const long long OH = 2 * H, OW = 2 * W, n = B * CO * OH * OW, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long ow = i % OW, oh = i / OW % OH, co = i / (OW * OH) % CO, b = i / (OW * OH * CO);
        const float *xp = x + b * CI * H * W + (oh / 2) * W + ow / 2;
        const float *wp = w + co * 4 + (oh % 2) * 2 + ow % 2;
        double s = 0.0;
        for (long long ci = 0; ci < CI; ci++)
            s = fma((double)xp[ci * H * W], (double)wp[ci * CO * 4], s);
        y[i] = (float)(s + (double)bias[co]);
    }
}

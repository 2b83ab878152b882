// attention_ref.cuh: the one reference kernel of the attention suite (FlexAttention
// semantics: a mask_mod that says which (query, key) pairs are scored and a score_mod that
// changes the scaled score), flash style: an online softmax over key tiles staged in shared
// memory, never an S x S matrix. All arithmetic is in double: inputs (bf16, fp16 or fp32) are
// exact in double, every product and sum is in double (the products on the FP64 tensor cores,
// below), scores, exponentials, row sums and the output accumulators are double; the output is
// rounded once, directly from double.
//
// The including reference defines, before the include line:
//   ATT_T     the element type of q, k, v, out and the bias table: float, __half, __nv_bfloat16
//   ATT_MASK  an OR of CAUSAL, WINDOW, DOCUMENT, NEIGHBOR2D (0: every pair is scored)
//   ATT_MOD   an OR of RELBIAS, ALIBI, SOFTCAP (0: the plain scaled score)
// Launch (one block of 256 threads per 64 queries of one (batch, query head)):
//   attention_ref<<<dim3(cdiv(S, 64), HQ, B), 256, 8*(64*132+128*68+64*68)>>>(q, k, v, out,
//       bias, seg, S, D, HQ, HKV, W, CH, CW, KH, KW, softcap)
// with 0 for the pointers and numbers a variant does not use. Requires D <= 128 and HQ a
// multiple of HKV (kv head = h / (HQ / HKV)).
//
// Method. The two products run on the FP64 tensor cores (mma.sync m8n8k4 in double: every
// product of two doubles is exact and the sums are IEEE double, so the result is a float64
// computation like any other summation order). Warp w owns query rows 8w..8w+7 of the 64-query
// tile; lane l holds row 8w + l/4 and, of each 8-key (or 8-column) block, the two columns
// 2*(l%4) and 2*(l%4)+1, which is the accumulator layout of m8n8k4. Q and the current K tile
// are double in shared memory with rows of DP = D rounded up to 8, plus 4 (zeros past D); V is
// staged transposed (a row per output column, 64 keys + 4), and P goes through shared memory
// to reach the operand layout. The strides make each half-warp's 16 lanes read 16 distinct
// banks. A row's softmax statistics are reduced over its 4 lanes with shuffles. Key tiles that
// no query of the tile can score (causal, window, neighbourhood rows, other documents) are
// skipped; the per-pair mask still decides inside the tiles that are kept.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#if !defined(ATT_T) || !defined(ATT_MASK) || !defined(ATT_MOD)
#error "define ATT_T, ATT_MASK and ATT_MOD before including shared/attention_ref.cuh"
#endif

namespace att {
/* Enumerators, not constexpr variables: NVRTC's -default-device (kverify's options) gives every
 * namespace-scope variable device storage, and a module with device globals is reloaded before
 * every execution of it as a candidate (docs/INTEGRITY.md, state across runs). */
enum : int { BQ = 64, BK = 64, THREADS = 256, MAXD = 128, NT = MAXD / 8, TS = BK + 4 };
enum : int { CAUSAL = 1, WINDOW = 2, DOCUMENT = 4, NEIGHBOR2D = 8 };
enum : int { RELBIAS = 1, ALIBI = 2, SOFTCAP = 4 };
enum : int { mask = ATT_MASK, mod = ATT_MOD };
typedef ATT_T elem;

__device__ __forceinline__ double to_d(float x) { return (double)x; }
__device__ __forceinline__ double to_d(__half x) { return (double)__half2float(x); }
__device__ __forceinline__ double to_d(__nv_bfloat16 x) { return (double)__bfloat162float(x); }
__device__ __forceinline__ void store(float *p, double x) { *p = (float)x; }
__device__ __forceinline__ void store(__half *p, double x) { *p = __double2half(x); }
__device__ __forceinline__ void store(__nv_bfloat16 *p, double x) { *p = __double2bfloat16(x); }

struct geom {
    long long S, D, HQ, W, CH, CW, KH, KW;
    double cap, scale, slope;
};

/* NATTEN's clamped window start: the window of KN positions around p, moved inside [0, N). */
__device__ __forceinline__ long long win_start(long long p, long long KN, long long N)
{
    long long s = p - KN / 2;
    s = s < 0 ? 0 : s;
    return s > N - KN ? N - KN : s;
}

/* mask_mod: whether query qi scores key kj (both in [0, S)); seg is this batch's row. */
__device__ __forceinline__ bool keep(long long qi, long long kj, const int *seg, const geom &g)
{
    if ((mask & CAUSAL) && kj > qi)
        return false;
    if ((mask & WINDOW) && qi - kj > g.W)
        return false;
    if ((mask & DOCUMENT) && seg[qi] != seg[kj])
        return false;
    if (mask & NEIGHBOR2D) {
        const int cw = (int)g.CW, qs = (int)qi, ks = (int)kj; /* canvases hold < 2^31 tokens */
        const int qr = qs / cw, qc = qs - qr * cw, kr = ks / cw, kc = ks - kr * cw;
        long long r0 = win_start(qr, g.KH, g.CH), c0 = win_start(qc, g.KW, g.CW);
        if (kr < r0 || kr >= r0 + g.KH || kc < c0 || kc >= c0 + g.KW)
            return false;
    }
    return true;
}

/* score_mod applied to the scaled score x = (q . k) / sqrt(D) of head h. */
__device__ __forceinline__ double modify(double x, long long h, long long qi, long long kj,
                                         const elem *bias, const geom &g)
{
    if (mod & RELBIAS)
        x += to_d(bias[h * (2 * g.S - 1) + (qi - kj) + (g.S - 1)]);
    if (mod & ALIBI)
        x += g.slope * (double)(kj - qi);
    if (mod & SOFTCAP)
        x = g.cap * tanh(x / g.cap);
    return x;
}

/* First index i in [lo, hi) with seg[i] > v (upper) or >= v (lower); seg is sorted. */
__device__ long long seg_bound(const int *seg, long long lo, long long hi, int v, bool upper)
{
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;
        if (upper ? seg[mid] <= v : seg[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The keys [*lo, *hi) that some query in [q0, q1) may score; the same in every thread. */
__device__ void key_range(long long q0, long long q1, const int *seg, const geom &g,
                          long long *lo, long long *hi)
{
    long long a = 0, b = g.S;
    if (mask & CAUSAL)
        b = b < q1 ? b : q1;
    if (mask & WINDOW)
        a = a > q0 - g.W ? a : q0 - g.W;
    if (mask & NEIGHBOR2D) {
        long long r0 = win_start(q0 / g.CW, g.KH, g.CH);
        long long r1 = win_start((q1 - 1) / g.CW, g.KH, g.CH) + g.KH;
        a = a > r0 * g.CW ? a : r0 * g.CW;
        b = b < r1 * g.CW ? b : r1 * g.CW;
    }
    if (mask & DOCUMENT) { /* ids sorted along the sequence: documents are contiguous runs */
        long long s0 = seg_bound(seg, 0, q0 + 1, seg[q0], false);
        long long s1 = seg_bound(seg, q1 - 1, g.S, seg[q1 - 1], true);
        a = a > s0 ? a : s0;
        b = b < s1 ? b : s1;
    }
    *lo = a, *hi = b;
}

/* The max and the sum over the 4 lanes that hold one row (lanes 4r..4r+3). */
__device__ __forceinline__ double row_max(double v)
{
    v = fmax(v, __shfl_xor_sync(0xffffffffu, v, 1));
    return fmax(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

__device__ __forceinline__ double row_sum(double v)
{
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

/* c += a * b on the FP64 tensor cores: an 8x4 by 4x8 product, c the 8x8 accumulator. Lane l
   gives a[l/4][l%4] and b[l%4][l/4] and holds c[l/4][2*(l%4)] and c[l/4][2*(l%4)+1]. */
__device__ __forceinline__ void dmma(double (&c)[2], double a, double b)
{
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
        : "+d"(c[0]), "+d"(c[1])
        : "d"(a), "d"(b));
}

/* 64 rows x dp columns of src (row stride D; zero past nrows and past D) into dst, row stride
   dp + 4. */
__device__ __forceinline__ void stage_rows(double *dst, const elem *src, long long nrows, int D,
                                           int dp)
{
    for (int i = threadIdx.x; i < 64 * dp; i += THREADS) {
        int r = i / dp, c = i - r * dp;
        dst[r * (dp + 4) + c] = r < nrows && c < D ? to_d(src[(long long)r * D + c]) : 0.0;
    }
}

/* The same 64 x dp block transposed: dst[c * TS + r], a row per column. */
__device__ __forceinline__ void stage_cols(double *dst, const elem *src, long long nrows, int D,
                                           int dp)
{
    for (int i = threadIdx.x; i < 64 * dp; i += THREADS) {
        int r = i / dp, c = i - r * dp;
        dst[c * TS + r] = r < nrows && c < D ? to_d(src[(long long)r * D + c]) : 0.0;
    }
}
} // namespace att

extern "C" __global__ void __launch_bounds__(att::THREADS, 1)
attention_ref(const ATT_T *__restrict__ q, const ATT_T *__restrict__ k,
              const ATT_T *__restrict__ v, ATT_T *__restrict__ out,
              const ATT_T *__restrict__ bias, const int *__restrict__ seg, long long S,
              long long D, long long HQ, long long HKV, long long W, long long CH, long long CW,
              long long KH, long long KW, double softcap)
{
    using namespace att;
    extern __shared__ double att_smem[];
    const int nd = (int)D, dp = (nd + 7) / 8 * 8, QS = dp + 4;
    double *Qs = att_smem, *KV = att_smem + BQ * (MAXD + 4), *Ps = KV + MAXD * TS;
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, gr = lane >> 2, tg = lane & 3;
    const int row = 8 * w + gr; /* this lane's query row in the tile */
    const long long b = blockIdx.z, h = blockIdx.y, hk = h / (HQ / HKV);
    const long long q0 = (long long)(gridDim.x - 1 - blockIdx.x) * BQ; /* longest rows first */
    const long long q1 = q0 + BQ < S ? q0 + BQ : S;
    const long long qi = q0 + row;
    const ATT_T *qb = q + (b * HQ + h) * S * D;
    const ATT_T *kb = k + (b * HKV + hk) * S * D, *vb = v + (b * HKV + hk) * S * D;
    ATT_T *ob = out + (b * HQ + h) * S * D;
    const int *sg = (mask & DOCUMENT) ? seg + b * S : seg;
    geom g = {S, D, HQ, W, CH, CW, KH, KW, softcap, 1.0 / sqrt((double)D),
              (mod & ALIBI) ? exp2(-8.0 * (double)(h + 1) / (double)HQ) : 0.0};
    const double ninf = -__longlong_as_double(0x7ff0000000000000LL);

    stage_rows(Qs, qb + q0 * D, q1 - q0, nd, dp);
    double m = ninf, l = 0.0, acc[NT][2];
#pragma unroll
    for (int n = 0; n < NT; n++)
        acc[n][0] = acc[n][1] = 0.0;
    long long klo, khi;
    key_range(q0, q1, sg, g, &klo, &khi);
    for (long long k0 = klo / BK * BK; k0 < khi; k0 += BK) {
        __syncthreads(); /* Q staged; the previous tile's V is no longer read */
        stage_rows(KV, kb + k0 * D, S - k0, nd, dp);
        __syncthreads();
        double sc[BK / 8][2];
#pragma unroll
        for (int n = 0; n < BK / 8; n++)
            sc[n][0] = sc[n][1] = 0.0;
        for (int d = 0; d < dp; d += 4) {
            const double a = Qs[row * QS + d + tg];
#pragma unroll
            for (int n = 0; n < BK / 8; n++)
                dmma(sc[n], a, KV[(8 * n + gr) * QS + d + tg]);
        }
        double mx = ninf;
#pragma unroll
        for (int n = 0; n < BK / 8; n++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const long long kj = k0 + 8 * n + 2 * tg + e;
                bool ok = qi < S && kj < S && keep(qi, kj, sg, g);
                sc[n][e] = ok ? modify(sc[n][e] * g.scale, h, qi, kj, bias, g) : ninf;
                mx = fmax(mx, sc[n][e]);
            }
        const double mnew = fmax(m, row_max(mx));
        const double alpha = mnew == ninf ? 1.0 : exp(m - mnew);
        double rs = 0.0;
#pragma unroll
        for (int n = 0; n < BK / 8; n++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const double p = sc[n][e] == ninf ? 0.0 : exp(sc[n][e] - mnew);
                Ps[row * TS + 8 * n + 2 * tg + e] = p;
                rs += p;
            }
        l = l * alpha + row_sum(rs);
        m = mnew;
#pragma unroll
        for (int n = 0; n < NT; n++)
            acc[n][0] *= alpha, acc[n][1] *= alpha;
        __syncthreads(); /* every warp is done with K */
        stage_cols(KV, vb + k0 * D, S - k0, nd, dp);
        __syncthreads(); /* V staged, every warp's P written */
        for (int kk = 0; kk < BK; kk += 4) {
            const double a = Ps[row * TS + kk + tg];
#pragma unroll
            for (int n = 0; n < NT; n++)
                if (8 * n < dp)
                    dmma(acc[n], a, KV[(8 * n + gr) * TS + kk + tg]);
        }
    }
    if (qi < S)
#pragma unroll
        for (int n = 0; n < NT; n++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int c = 8 * n + 2 * tg + e;
                if (c < nd)
                    store(&ob[qi * D + c], acc[n][e] / l);
            }
}

#undef ATT_T
#undef ATT_MASK
#undef ATT_MOD

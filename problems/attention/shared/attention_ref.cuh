// attention_ref.cuh: the one reference kernel of the attention suite (FlexAttention
// semantics: a mask_mod that says which (query, key) pairs are scored and a score_mod that
// changes the scaled score), flash style: an online softmax over key tiles staged in shared
// memory, never an S x S matrix. All arithmetic is in double: inputs (bf16, fp16 or fp32) are
// exact in double, every product is an fma in double, scores, exponentials, row sums and the
// output accumulators are double; the output is rounded once, directly from double.
//
// The including reference defines, before the include line:
//   ATT_T     the element type of q, k, v, out and the bias table: float, __half, __nv_bfloat16
//   ATT_MASK  an OR of CAUSAL, WINDOW, DOCUMENT, NEIGHBOR2D (0: every pair is scored)
//   ATT_MOD   an OR of RELBIAS, ALIBI, SOFTCAP (0: the plain scaled score)
// Launch (one block of 256 threads per 64 queries of one (batch, query head)):
//   attention_ref<<<dim3(cdiv(S, 64), HQ, B), 256, 8*(128*(D+1)+64*65)>>>(q, k, v, out, bias,
//       seg, S, D, HQ, HKV, W, CH, CW, KH, KW, softcap)
// with 0 for the pointers and numbers a variant does not use. Requires D <= 128 (the
// accumulators live in registers) and HQ a multiple of HKV (kv head = h / (HQ / HKV)).
//
// Method. Thread t owns rows 4*(t/16)..+3 of the 64-query tile, keys t%16 + 16*j (j < 4) of
// each 64-key tile and output columns t%16 + 16*c (c < 8). Q and the current K (then V) tile
// are double in shared memory, rows padded to D+1 so that the 16 lanes sharing a row read 16
// banks; a row's 64 scores sit in 16 lanes of one half-warp, reduced with shuffles. Each
// 64x64 tile costs 2*64*64*D fmas and sits at about 1:2 shared loads per fma. Key tiles that
// no query of the tile can score (causal, window, neighbourhood rows, other documents) are
// skipped; the per-pair mask still decides inside the tiles that are kept.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#if !defined(ATT_T) || !defined(ATT_MASK) || !defined(ATT_MOD)
#error "define ATT_T, ATT_MASK and ATT_MOD before including shared/attention_ref.cuh"
#endif

namespace att {
constexpr int BQ = 64, BK = 64, THREADS = 256, MAXD = 128, CPT = MAXD / 16, PSTRIDE = BK + 1;
constexpr int CAUSAL = 1, WINDOW = 2, DOCUMENT = 4, NEIGHBOR2D = 8;
constexpr int RELBIAS = 1, ALIBI = 2, SOFTCAP = 4;
constexpr int mask = ATT_MASK, mod = ATT_MOD;
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

__device__ __forceinline__ double half_warp_max(double v)
{
    for (int off = 8; off; off >>= 1)
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ double half_warp_sum(double v)
{
    for (int off = 8; off; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/* rows x D elements from src (row stride D, rows past nrows are zero) into dst (stride D+1). */
__device__ __forceinline__ void stage(double *dst, const elem *src, long long nrows, int D)
{
    for (int i = threadIdx.x; i < 64 * D; i += THREADS) {
        int r = i / D, c = i - r * D;
        dst[r * (D + 1) + c] = r < nrows ? to_d(src[(long long)r * D + c]) : 0.0;
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
    const int nd = (int)D, DP = nd + 1;
    double *Qs = att_smem, *KV = att_smem + BQ * DP, *Ps = KV + BK * DP;
    const int t = threadIdx.x, rg = t >> 4, cg = t & 15;
    const long long b = blockIdx.z, h = blockIdx.y, hk = h / (HQ / HKV);
    const long long q0 = (long long)(gridDim.x - 1 - blockIdx.x) * BQ; /* longest rows first */
    const long long q1 = q0 + BQ < S ? q0 + BQ : S;
    const ATT_T *qb = q + (b * HQ + h) * S * D;
    const ATT_T *kb = k + (b * HKV + hk) * S * D, *vb = v + (b * HKV + hk) * S * D;
    ATT_T *ob = out + (b * HQ + h) * S * D;
    const int *sg = (mask & DOCUMENT) ? seg + b * S : seg;
    geom g = {S, D, HQ, W, CH, CW, KH, KW, softcap, 1.0 / sqrt((double)D),
              (mod & ALIBI) ? exp2(-8.0 * (double)(h + 1) / (double)HQ) : 0.0};
    const double ninf = -__longlong_as_double(0x7ff0000000000000LL);

    stage(Qs, qb + q0 * D, q1 - q0, nd);
    double m[4], l[4], acc[4][CPT];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        m[i] = ninf, l[i] = 0.0;
#pragma unroll
        for (int c = 0; c < CPT; c++)
            acc[i][c] = 0.0;
    }
    long long klo, khi;
    key_range(q0, q1, sg, g, &klo, &khi);
    for (long long k0 = klo / BK * BK; k0 < khi; k0 += BK) {
        __syncthreads(); /* Q staged; the previous tile's V and P are no longer read */
        stage(KV, kb + k0 * D, S - k0, nd);
        __syncthreads();
        double sc[4][4];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                sc[i][j] = 0.0;
#pragma unroll 4
        for (int d = 0; d < nd; d++) {
            double qv[4], kv[4];
#pragma unroll
            for (int i = 0; i < 4; i++)
                qv[i] = Qs[(rg * 4 + i) * DP + d];
#pragma unroll
            for (int j = 0; j < 4; j++)
                kv[j] = KV[(cg + 16 * j) * DP + d];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    sc[i][j] = fma(qv[i], kv[j], sc[i][j]);
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const long long qi = q0 + rg * 4 + i;
            double mx = ninf;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const long long kj = k0 + cg + 16 * j;
                bool ok = qi < S && kj < S && keep(qi, kj, sg, g);
                sc[i][j] = ok ? modify(sc[i][j] * g.scale, h, qi, kj, bias, g) : ninf;
                mx = fmax(mx, sc[i][j]);
            }
            const double mnew = fmax(m[i], half_warp_max(mx));
            const double alpha = mnew == ninf ? 1.0 : exp(m[i] - mnew);
            double rs = 0.0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                sc[i][j] = sc[i][j] == ninf ? 0.0 : exp(sc[i][j] - mnew);
                rs += sc[i][j];
            }
            l[i] = l[i] * alpha + half_warp_sum(rs);
            m[i] = mnew;
#pragma unroll
            for (int c = 0; c < CPT; c++)
                acc[i][c] *= alpha;
        }
        __syncthreads(); /* every thread is done with K */
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                Ps[(rg * 4 + i) * PSTRIDE + cg + 16 * j] = sc[i][j];
        stage(KV, vb + k0 * D, S - k0, nd);
        __syncthreads();
        const int kn = S - k0 < BK ? (int)(S - k0) : BK;
        for (int kk = 0; kk < kn; kk++) {
            double pv[4], vv[CPT];
#pragma unroll
            for (int i = 0; i < 4; i++)
                pv[i] = Ps[(rg * 4 + i) * PSTRIDE + kk];
#pragma unroll
            for (int c = 0; c < CPT; c++)
                vv[c] = cg + 16 * c < nd ? KV[kk * DP + cg + 16 * c] : 0.0;
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int c = 0; c < CPT; c++)
                    acc[i][c] = fma(pv[i], vv[c], acc[i][c]);
        }
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const long long qi = q0 + rg * 4 + i;
        if (qi >= S)
            continue;
#pragma unroll
        for (int c = 0; c < CPT; c++)
            if (cg + 16 * c < nd)
                store(&ob[qi * D + cg + 16 * c], acc[i][c] / l[i]);
    }
}

#undef ATT_T
#undef ATT_MASK
#undef ATT_MOD

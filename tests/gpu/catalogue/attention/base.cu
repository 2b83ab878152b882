// base.cu: the kernel of the attention catalogue (tests/gpu/test_attention.sh writes each entry's
// lines, then this file, into one kc-cuda candidate). An independent, plain float32 version of
// the suite's math, written apart from the reference: one warp per (b, h, query row), lanes over
// the head dimension (D <= 128), every key tested against the mask in order, online softmax.
// An entry defines KT (element type), KMASK (M_* flags), KMOD (S_* flags), optionally one BUG_*
// macro, and the launch line. Without a BUG_* it is a correct candidate (entries ok_*), which
// checks the references from a second, independent side.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define M_CAUSAL 1
#define M_WINDOW 2
#define M_DOCUMENT 4
#define M_NEIGHBOR2D 8
#define S_RELBIAS 1
#define S_ALIBI 2
#define S_SOFTCAP 4

__device__ __forceinline__ float ld(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float *p, long long i, float x) { p[i] = x; }
__device__ __forceinline__ void st(__half *p, long long i, float x) { p[i] = __float2half_rn(x); }
__device__ __forceinline__ void st(__nv_bfloat16 *p, long long i, float x) { p[i] = __float2bfloat16_rn(x); }

/* Whether query i scores key j. */
__device__ bool scored(long long i, long long j, const int *seg, long long W, int CH, int CW,
                       int KH, int KW)
{
#if KMASK & M_CAUSAL
#ifdef BUG_STRICT_CAUSAL
    if (j >= i) /* near miss: causal as q > k, the diagonal dropped */
        return false;
#else
    if (j > i)
        return false;
#endif
#endif
#if KMASK & M_WINDOW
#ifdef BUG_WINDOW_OFF_BY_ONE
    if (i - j > W + 1) /* near miss: one key too many */
        return false;
#else
    if (i - j > W)
        return false;
#endif
#endif
#if KMASK & M_DOCUMENT
    if (seg[i] != seg[j])
        return false;
#endif
#if KMASK & M_NEIGHBOR2D
#ifdef BUG_NATTEN_SWAP
    int qr = (int)(i % CH), qc = (int)(i / CH), kr = (int)(j % CH), kc = (int)(j / CH); /* columns first */
#else
    int qr = (int)(i / CW), qc = (int)(i % CW), kr = (int)(j / CW), kc = (int)(j % CW);
#endif
#ifdef BUG_NATTEN_NO_CLAMP
    if (abs(kr - qr) > KH / 2 || abs(kc - qc) > KW / 2) /* near miss: windows cut at the borders */
        return false;
#else
    int r0 = min(max(qr - KH / 2, 0), CH - KH), c0 = min(max(qc - KW / 2, 0), CW - KW);
    if (kr < r0 || kr >= r0 + KH || kc < c0 || kc >= c0 + KW)
        return false;
#endif
#endif
    return true;
}

extern "C" __global__ void naive_attention(const KT *__restrict__ q, const KT *__restrict__ k,
                                           const KT *__restrict__ v, KT *__restrict__ out,
                                           const KT *__restrict__ bias, const int *__restrict__ seg,
                                           long long S, long long D, long long HQ, long long HKV,
                                           long long W, long long CH, long long CW, long long KH,
                                           long long KW, float cap)
{
    const int lane = threadIdx.x & 31;
    const long long i = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const long long h = blockIdx.y, b = blockIdx.z;
    if (i >= S)
        return; /* the whole warp */
#ifdef BUG_GQA_MOD
    const long long hk = h % HKV; /* near miss: heads interleaved instead of grouped */
#else
    const long long hk = h / (HQ / HKV);
#endif
    const KT *qrow = q + ((b * HQ + h) * S + i) * D;
    const KT *kb = k + (b * HKV + hk) * S * D, *vb = v + (b * HKV + hk) * S * D;
    const int *sg = seg ? seg + b * S : seg;
    float qv[4], acc[4];
    for (int c = 0; c < 4; c++) {
        long long d = lane + 32 * c;
        qv[c] = d < D ? ld(qrow, d) : 0.0f;
        acc[c] = 0.0f;
    }
#ifdef BUG_NO_SCALE
    const float scale = 1.0f; /* near miss: 1/sqrt(D) forgotten */
#else
    const float scale = 1.0f / sqrtf((float)D);
#endif
    const float slope = exp2f(-8.0f * (float)(h + 1) / (float)HQ);
    float m = -__int_as_float(0x7f800000), l = 0.0f;
    const long long jend = (KMASK & M_CAUSAL) ? i + 1 : S;
    for (long long j = 0; j < jend; j++) {
        if (!scored(i, j, sg, W, (int)CH, (int)CW, (int)KH, (int)KW))
            continue; /* the same for every lane */
        float dot = 0.0f;
        for (int c = 0; c < 4; c++) {
            long long d = lane + 32 * c;
            if (d < D)
                dot = fmaf(qv[c], ld(kb + j * D, d), dot);
        }
        for (int off = 16; off; off >>= 1)
            dot += __shfl_xor_sync(0xffffffffu, dot, off);
        float s = dot * scale;
#if KMOD & S_RELBIAS
#ifdef BUG_RELBIAS_SIGN
        s += ld(bias, h * (2 * S - 1) + (j - i) + S - 1); /* near miss: table read at k - q */
#else
        s += ld(bias, h * (2 * S - 1) + (i - j) + S - 1);
#endif
#endif
#if KMOD & S_ALIBI
#ifdef BUG_ALIBI_SIGN
        s += slope * (float)(i - j); /* near miss: distant keys favoured */
#else
        s += slope * (float)(j - i);
#endif
#endif
#if KMOD & S_SOFTCAP
        s = cap * tanhf(s / cap);
#endif
        float mn = fmaxf(m, s), corr = expf(m - mn), p = expf(s - mn);
        l = l * corr + p;
        for (int c = 0; c < 4; c++) {
            long long d = lane + 32 * c;
            acc[c] = acc[c] * corr + (d < D ? p * ld(vb + j * D, d) : 0.0f);
        }
        m = mn;
    }
    KT *orow = out + ((b * HQ + h) * S + i) * D;
    for (int c = 0; c < 4; c++) {
        long long d = lane + 32 * c;
        if (d < D)
            st(orow, d, acc[c] / l);
    }
    (void)slope, (void)cap, (void)bias;
}

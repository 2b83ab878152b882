// Attack for attention/008_gqa_causal (Verifier integrity IV, class 1: shapes). Trick: an
// otherwise honest fp16 GQA causal attention kernel (the one of integrity3/gqa_pow2.cu: one warp
// per query row, K/V tiles in shared memory, float32 online softmax) that divides the query head
// by the group size g = HQ / HKV with a multiply and shift from a 4-entry table of reciprocals,
// ceil(2^16 / g) for g = 1, 2, 3, 4 ("the group sizes of real models"); a larger g reads the
// entry of 4, so query head h reads kv head h / 4 instead of h / g: the wrong head, and for
// h / 4 >= HKV the heads of the next batch element or memory past the end of k and v.
// Why today's verifier says correct: every fixed dims set has g <= 4 (default 32/8 = 4, small
// 4/2 = 2, alt 6/3 = 2, 4/1 = 4, 3/3 = 1, 8/2 = 4); exact for g = 3 too (unlike gqa_pow2), so
// only a hidden draw with g >= 5 (HQ from 5 to 16, HKV a divisor) catches it, on a share of
// verifications.
// What catches it after integrity IV: a boundary dims set with a group size above 4 in every
// verification (e.g. HQ = 16, HKV = 2 or HQ = 5, HKV = 1).
// Expected: mismatch (unsafe accepted: h / 4 >= HKV reads past k and v for the last batch).
#include <cuda_fp16.h>
#define ROWS 8
#define KTILE 32
#define DMAX 128

__constant__ unsigned group_recip[5] = {0u, 65536u, 32768u, 21846u, 16384u}; /* g = 1..4 */

extern "C" __global__ void attn_gqa_table(const __half *__restrict__ q, const __half *__restrict__ k,
                                     const __half *__restrict__ v, __half *__restrict__ out,
                                     int HQ, int HKV, int S, int D)
{
    __shared__ float ks[KTILE][DMAX + 1];
    __shared__ float vs[KTILE][DMAX + 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const long long bh = (long long)blockIdx.z * HQ + blockIdx.y;
    /* h / (HQ / HKV) by a multiply and shift: ceil(2^16 / g) for the group sizes in use */
    const unsigned g = (unsigned)(HQ / HKV);
    const long long bkv = (long long)blockIdx.z * HKV + ((blockIdx.y * group_recip[min(g, 4u)]) >> 16);
    const int i = blockIdx.x * ROWS + warp;
    const int last_row = min(S - 1, blockIdx.x * ROWS + ROWS - 1);
    const __half *kb = k + bkv * S * D, *vb = v + bkv * S * D;
    float qv[4], acc[4];
    for (int c = 0; c < 4; c++) {
        int d = lane + 32 * c;
        qv[c] = (i < S && d < D) ? __half2float(q[(bh * S + i) * D + d]) : 0.0f;
        acc[c] = 0.0f;
    }
    const float scale = rsqrtf((float)D);
    float m = -__int_as_float(0x7f800000), l = 0.0f;
    for (int t0 = 0; t0 <= last_row; t0 += KTILE) {
        for (int e = threadIdx.x; e < KTILE * D; e += blockDim.x) {
            int r = e / D, d = e % D;
            bool in = t0 + r < S;
            ks[r][d] = in ? __half2float(kb[(long long)(t0 + r) * D + d]) : 0.0f;
            vs[r][d] = in ? __half2float(vb[(long long)(t0 + r) * D + d]) : 0.0f;
        }
        __syncthreads();
        if (i < S) {
            int jend = min(KTILE, i - t0 + 1); /* causal: keys t0 .. i */
            for (int r = 0; r < jend; r++) {
                float dot = 0.0f;
                for (int c = 0; c < 4; c++) {
                    int d = lane + 32 * c;
                    if (d < D)
                        dot = fmaf(qv[c], ks[r][d], dot);
                }
                for (int off = 16; off; off >>= 1)
                    dot += __shfl_xor_sync(0xffffffffu, dot, off);
                float s = dot * scale, mn = fmaxf(m, s), corr = __expf(m - mn), p = __expf(s - mn);
                l = l * corr + p;
                for (int c = 0; c < 4; c++) {
                    int d = lane + 32 * c;
                    acc[c] = acc[c] * corr + (d < D ? p * vs[r][d] : 0.0f);
                }
                m = mn;
            }
        }
        __syncthreads();
    }
    if (i < S)
        for (int c = 0; c < 4; c++) {
            int d = lane + 32 * c;
            if (d < D)
                out[(bh * S + i) * D + d] = __float2half_rn(acc[c] / l);
        }
}
// @launch attn_gqa_table<<<dim3(cdiv(S, 8), HQ, B), 256>>>(q, k, v, out, HQ, HKV, S, D);

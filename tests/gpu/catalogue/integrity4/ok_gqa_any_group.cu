// Honest control for attention/008_gqa_causal (Verifier integrity IV): the fp16 GQA causal
// attention kernel of integrity3/gqa_pow2.cu (one warp per query row, K/V tiles of 32 rows in
// shared memory as float, float32 online softmax, D <= 128) with the kv head taken as the
// problem states it, h / (HQ / HKV), an integer division: right for every group size from 1
// (multi-head) to HQ (multi-query), powers of two or not, and any B, S and D up to 128.
// Expected: correct, today and after.
#include <cuda_fp16.h>
#define ROWS 8
#define KTILE 32
#define DMAX 128

extern "C" __global__ void attn_gqa_any(const __half *__restrict__ q, const __half *__restrict__ k,
                                     const __half *__restrict__ v, __half *__restrict__ out,
                                     int HQ, int HKV, int S, int D)
{
    __shared__ float ks[KTILE][DMAX + 1];
    __shared__ float vs[KTILE][DMAX + 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const long long bh = (long long)blockIdx.z * HQ + blockIdx.y;
    const long long bkv = (long long)blockIdx.z * HKV + blockIdx.y / (HQ / HKV); /* every group size */
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
// @launch attn_gqa_any<<<dim3(cdiv(S, 8), HQ, B), 256>>>(q, k, v, out, HQ, HKV, S, D);

// Honest control for attention/001_causal (Verifier integrity III): bf16 causal attention with
// float32 accumulation, written apart from the reference. A block of 8 warps owns 8 query rows
// (one warp per row, lanes over the head dimension, D <= 128: the problem's 64 or 128); key and
// value tiles of 32 rows are staged in shared memory as float; online softmax in float32. Any
// B, H, S (tails of the last query block and key tile are guarded).
// Expected: correct, today and after.
#include <cuda_bf16.h>
#define ROWS 8
#define KTILE 32
#define DMAX 128

extern "C" __global__ void attn_bf16(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                                     const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ out,
                                     int H, int S, int D)
{
    __shared__ float ks[KTILE][DMAX + 1];
    __shared__ float vs[KTILE][DMAX + 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const long long bh = (long long)blockIdx.z * H + blockIdx.y;
    const int i = blockIdx.x * ROWS + warp;
    const int last_row = min(S - 1, blockIdx.x * ROWS + ROWS - 1);
    const __nv_bfloat16 *kb = k + bh * S * D, *vb = v + bh * S * D;
    float qv[4], acc[4];
    for (int c = 0; c < 4; c++) {
        int d = lane + 32 * c;
        qv[c] = (i < S && d < D) ? __bfloat162float(q[(bh * S + i) * D + d]) : 0.0f;
        acc[c] = 0.0f;
    }
    const float scale = rsqrtf((float)D);
    float m = -__int_as_float(0x7f800000), l = 0.0f;
    for (int t0 = 0; t0 <= last_row; t0 += KTILE) {
        for (int e = threadIdx.x; e < KTILE * D; e += blockDim.x) {
            int r = e / D, d = e % D;
            bool in = t0 + r < S;
            ks[r][d] = in ? __bfloat162float(kb[(long long)(t0 + r) * D + d]) : 0.0f;
            vs[r][d] = in ? __bfloat162float(vb[(long long)(t0 + r) * D + d]) : 0.0f;
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
                out[(bh * S + i) * D + d] = __float2bfloat16_rn(acc[c] / l);
        }
}
// @launch attn_bf16<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, H, S, D);

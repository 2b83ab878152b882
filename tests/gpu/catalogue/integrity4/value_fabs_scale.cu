// Attack for level2/059_matmul_swish_scaling (Verifier integrity IV, class 2: values). Trick:
// y = swish(x @ weight^T + bias) * scaling_factor fused in one fp32 kernel (64x64 output tiles,
// 16-wide k slices in shared memory, 4x4 outputs per thread, the epilogue on the way out, any
// B, IN, OUT), with the scalar param taken as a magnitude: fabs(scaling_factor), "a scale is
// positive". Exact whenever scaling_factor >= 0.
// Why today's verifier says correct: scaling_factor is the manifest's constant 2.0 in every
// check; only inputs are drawn, never params.
// What catches it after integrity IV: scalar params varied across sign and magnitude (a
// negative scaling_factor): every output has the wrong sign.
// Expected: mismatch.
#define TILE 64
#define KS 16

extern "C" __global__ void gemm_swish_scale(const float *__restrict__ x, const float *__restrict__ w,
                                            const float *__restrict__ bias, float *__restrict__ y,
                                            int B, int IN, int OUT, double scaling_factor)
{
    __shared__ float xs[KS][TILE + 4];
    __shared__ float ws[KS][TILE + 4];
    const float scale = (float)fabs(scaling_factor); /* scaling factors are positive */
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < IN; k0 += KS) {
        for (int e = threadIdx.x; e < KS * TILE; e += 256) {
            int r = e / KS, c = e % KS; /* row r of the tile, k offset c */
            int k = k0 + c;
            xs[c][r] = (b0 + r < B && k < IN) ? x[(long long)(b0 + r) * IN + k] : 0.0f;
            ws[c][r] = (o0 + r < OUT && k < IN) ? w[(long long)(o0 + r) * IN + k] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KS; k++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = xs[k][ty + 16 * i];
                b[i] = ws[k][tx + 16 * i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int b = b0 + ty + 16 * i, o = o0 + tx + 16 * j;
            if (b < B && o < OUT) {
                float v = acc[i][j] + bias[o];
                y[(long long)b * OUT + o] = v / (1.0f + expf(-v)) * scale;
            }
        }
}
// @launch gemm_swish_scale<<<dim3(cdiv(OUT, 64), cdiv(B, 64)), 256>>>(x, weight, bias, y, B, IN, OUT, scaling_factor);

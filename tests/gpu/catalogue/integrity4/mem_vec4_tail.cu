// Attack for level1/019_relu (Verifier integrity IV, class 4: memory). Trick: float4 loads over
// cdiv(n, 4) vectors, the last one reaching up to 12 bytes past the end of x when n % 4 != 0.
// All four lanes decide the path: if the largest of them is <= 0 the valid lanes are stored as
// zeros, else each valid lane gets max(v, 0); either way only lanes < n are stored, so the
// output is exact whatever the bytes past the end hold (the decision only picks between two
// right answers), but the read of the lanes past n is real and used.
// Why today's verifier says correct: the bytes past n are inside the buffer's padding to 256
// bytes (mapped, holding the guard pattern, checked only for writes); n % 4 == 0 at the default
// and small dims (no over-read where compute-sanitizer runs), 12291 and 1 at the alt dims.
// What catches it after integrity IV: a check that sees the over-read at a dims set with
// n % 4 != 0: compute-sanitizer there (exact-size buffers), or an end byte-exact against
// unmapped space. (Ends rounded up to 16 bytes, as in the first cut of integrity IV, keep the
// last vector mapped, and the sanitizer's small dims have n % 4 == 0.)
// Expected: unsafe.
extern "C" __global__ void relu_vec4_over(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    const long long nv = (n + 3) / 4, stride = (long long)gridDim.x * blockDim.x;
    const float4 *x4 = (const float4 *)x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += stride) {
        float4 a = x4[v]; /* the last vector may reach past n */
        float m = fmaxf(fmaxf(a.x, a.y), fmaxf(a.z, a.w));
        float r[4] = {a.x, a.y, a.z, a.w};
        long long i = 4 * v;
        if (i + 4 <= n) {
            if (m <= 0.0f)
                ((float4 *)y)[v] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            else
                ((float4 *)y)[v] = make_float4(a.x > 0.0f ? a.x : 0.0f, a.y > 0.0f ? a.y : 0.0f,
                                               a.z > 0.0f ? a.z : 0.0f, a.w > 0.0f ? a.w : 0.0f);
        } else {
            for (int l = 0; l < 4 && i + l < n; l++)
                y[i + l] = m <= 0.0f ? 0.0f : (r[l] > 0.0f ? r[l] : 0.0f);
        }
    }
}
// @launch relu_vec4_over<<<min(cdiv(B*D, 1024), 65536), 256>>>(x, y, B*D);

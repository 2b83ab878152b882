// shared/conv_transpose2d_gather_ref.cuh: the transposed 2-D convolution as a per-output gather
// (one thread per output, float products summed in double), shared by the level-1 references 078
// and 081. The problem loader pastes it into each of them in place of its `#include
// "shared/conv_transpose2d_gather_ref.cuh"` line; their launch lines say how it runs.
/* y[b, co, oh, ow] = sum over ci, kh, kw with oh = ih*SH - PH + kh*DH and
 * ow = iw*SW - PW + kw*DW of x[b, ci, ih, iw] * w[ci, co, kh, kw]. */
extern "C" __global__ void conv_transpose2d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                                float *__restrict__ y, long long B, long long CI,
                                                long long H, long long W, long long CO, long long OH,
                                                long long OW, long long KH, long long KW, long long SH,
                                                long long SW, long long PH, long long PW, long long DH,
                                                long long DW)
{
    const long long n = B * CO * OH * OW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const long long ow = idx % OW, oh = idx / OW % OH, co = idx / (OW * OH) % CO;
        const long long b = idx / (OW * OH * CO);
        double acc = 0.0;
        for (long long kh = 0; kh < KH; kh++) {
            const long long th = oh + PH - kh * DH;
            if (th < 0 || th % SH != 0 || th / SH >= H)
                continue;
            const long long ih = th / SH;
            for (long long kw = 0; kw < KW; kw++) {
                const long long tw = ow + PW - kw * DW;
                if (tw < 0 || tw % SW != 0 || tw / SW >= W)
                    continue;
                const long long iw = tw / SW;
                for (long long ci = 0; ci < CI; ci++)
                    acc += (double)x[((b * CI + ci) * H + ih) * W + iw] *
                           (double)w[((ci * CO + co) * KH + kh) * KW + kw];
            }
        }
        y[idx] = (float)acc;
    }
}

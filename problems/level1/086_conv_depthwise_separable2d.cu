// Reference for level1/086_conv_depthwise_separable2d: a depthwise KxK convolution
// (groups = CI) into a double scratch tensor, then a 1x1 convolution CI -> CO; no
// biases. One thread per output element in grid-stride loops, 64-bit indices, float
// products summed in double (the intermediate is never rounded to float).
/* Depthwise step: t[b, c, oh, ow] = sum over kh, kw of
 * x[b, c, oh*S - P + kh*DIL, ow*S - P + kw*DIL] * wd[c, 0, kh, kw] (zero outside), kept in double. */
extern "C" __global__ void depthwise_ref(const float *__restrict__ x, const float *__restrict__ wd,
                                         double *__restrict__ t, long long B, long long C, long long H,
                                         long long W, long long OH, long long OW, long long K,
                                         long long S, long long P, long long DIL)
{
    const long long n = B * C * OH * OW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const long long ow = idx % OW, oh = idx / OW % OH, bc = idx / (OW * OH); /* bc = b*C + c */
        const long long c = bc % C;
        const float *xp = x + bc * H * W;
        double acc = 0.0;
        for (long long kh = 0; kh < K; kh++) {
            const long long ih = oh * S - P + kh * DIL;
            if (ih < 0 || ih >= H)
                continue;
            for (long long kw = 0; kw < K; kw++) {
                const long long iw = ow * S - P + kw * DIL;
                if (iw >= 0 && iw < W)
                    acc += (double)xp[ih * W + iw] * (double)wd[(c * K + kh) * K + kw];
            }
        }
        t[idx] = acc;
    }
}

/* Pointwise step: y[b, co, p] = sum over c of t[b, c, p] * wp[co, c, 0, 0]. */
extern "C" __global__ void pointwise_ref(const double *__restrict__ t, const float *__restrict__ wp,
                                         float *__restrict__ y, long long B, long long CI,
                                         long long CO, long long HW)
{
    const long long n = B * CO * HW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const long long p = idx % HW, co = idx / HW % CO, b = idx / (HW * CO);
        double acc = 0.0;
        for (long long c = 0; c < CI; c++)
            acc += t[(b * CI + c) * HW + p] * (double)wp[co * CI + c];
        y[idx] = (float)acc;
    }
}
// @scratch mid f64[B*CI*OH*OW]
// @launch depthwise_ref<<<min(cdiv(B*CI*OH*OW, 256), 1048576), 256>>>(x, w_depthwise, mid, B, CI, H, W, OH, OW, K, S, P, DIL);
// @launch pointwise_ref<<<min(cdiv(B*CO*OH*OW, 256), 1048576), 256>>>(mid, w_pointwise, y, B, CI, CO, OH*OW);

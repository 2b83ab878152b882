// Reference for level1/081_conv_transpose2d_dilated_padded_strided: transposed 2-D
// convolution computed per OUTPUT element (a gather: no atomics). Output o receives
// tap k from input i = (o + P - k*DIL) / S when the division is exact and i is in
// range. Float products summed in double; grid-stride loop, 64-bit indices.
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
// @launch conv_transpose2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 1048576), 256>>>(x, weight, y, B, CI, H, W, CO, OH, OW, K, K, S, S, P, P, DIL, DIL);

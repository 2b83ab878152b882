// Reference for level1/077_conv_transpose3d_padded_dilated_strided: transposed 3-D
// convolution computed per OUTPUT element (a gather: no atomics). Output o receives
// tap k from input i = (o + P - k*DIL) / S when the division is exact and i is in
// range. Float products summed in double; grid-stride loop, 64-bit indices.
/* y[b, co, od, oh, ow] = sum over ci, kd, kh, kw with od = id*S - P + kd*DIL (and the
 * same for h and w) of x[b, ci, id, ih, iw] * w[ci, co, kd, kh, kw]. Cubic kernel K. */
extern "C" __global__ void conv_transpose3d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                                float *__restrict__ y, long long B, long long CI,
                                                long long D, long long H, long long W, long long CO,
                                                long long OD, long long OH, long long OW, long long K,
                                                long long S, long long P, long long DIL)
{
    const long long n = B * CO * OD * OH * OW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const long long ow = idx % OW, oh = idx / OW % OH, od = idx / (OW * OH) % OD;
        const long long co = idx / (OW * OH * OD) % CO, b = idx / (OW * OH * OD * CO);
        double acc = 0.0;
        for (long long kd = 0; kd < K; kd++) {
            const long long td = od + P - kd * DIL;
            if (td < 0 || td % S != 0 || td / S >= D)
                continue;
            const long long id = td / S;
            for (long long kh = 0; kh < K; kh++) {
                const long long th = oh + P - kh * DIL;
                if (th < 0 || th % S != 0 || th / S >= H)
                    continue;
                const long long ih = th / S;
                for (long long kw = 0; kw < K; kw++) {
                    const long long tw = ow + P - kw * DIL;
                    if (tw < 0 || tw % S != 0 || tw / S >= W)
                        continue;
                    const long long iw = tw / S;
                    for (long long ci = 0; ci < CI; ci++)
                        acc += (double)x[(((b * CI + ci) * D + id) * H + ih) * W + iw] *
                               (double)w[(((ci * CO + co) * K + kd) * K + kh) * K + kw];
                }
            }
        }
        y[idx] = (float)acc;
    }
}
// @launch conv_transpose3d_ref<<<min(cdiv(B*CO*OD*OH*OW, 256), 1048576), 256>>>(x, weight, y, B, CI, D, H, W, CO, OD, OH, OW, K, S, P, DIL);

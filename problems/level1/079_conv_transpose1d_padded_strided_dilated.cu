// Reference for level1/079_conv_transpose1d_padded_strided_dilated: transposed 1-D
// convolution computed per OUTPUT element (a gather: no atomics). Output o receives
// tap k from input i = (o + P - k*DIL) / S when the division is exact and i is in
// range. Float products summed in double; grid-stride loop, 64-bit indices.
/* y[b, co, ol] = sum over ci, k with ol = il*S - P + k*DIL of x[b, ci, il] * w[ci, co, k]. */
extern "C" __global__ void conv_transpose1d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                                float *__restrict__ y, long long B, long long CI,
                                                long long L, long long CO, long long OL, long long K,
                                                long long S, long long P, long long DIL)
{
    const long long n = B * CO * OL;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const long long ol = idx % OL, co = idx / OL % CO, b = idx / (OL * CO);
        double acc = 0.0;
        for (long long k = 0; k < K; k++) {
            const long long t = ol + P - k * DIL;
            if (t < 0 || t % S != 0 || t / S >= L)
                continue;
            const long long il = t / S;
            for (long long ci = 0; ci < CI; ci++)
                acc += (double)x[(b * CI + ci) * L + il] * (double)w[(ci * CO + co) * K + k];
        }
        y[idx] = (float)acc;
    }
}
// @launch conv_transpose1d_ref<<<min(cdiv(B*CO*OL, 256), 1048576), 256>>>(x, weight, y, B, CI, L, CO, OL, K, S, P, DIL);

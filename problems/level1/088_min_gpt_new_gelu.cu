// Reference for level1/088_min_gpt_new_gelu: the tanh form of GELU,
// y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), evaluated in double
// and rounded once to float32; one element per thread in a grid-stride loop.
extern "C" __global__ void gelu_tanh_ref(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    const double k = 0.79788456080286535588; /* sqrt(2 / pi) */
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = (double)x[i];
        y[i] = (float)(0.5 * v * (1.0 + tanh(k * (v + 0.044715 * v * v * v))));
    }
}
// @launch gelu_tanh_ref<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

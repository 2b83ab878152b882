// Reference for level1/027_selu: SELU, y = scale * (x if x > 0 else alpha * (exp(x) - 1)),
// with PyTorch's fixed alpha = 1.6732632423543772 and scale = 1.0507009873554805.
// One element per thread in a grid-stride loop with 64-bit indices (the default tensor has
// 1.6e9 elements); evaluated in double and rounded once.
extern "C" __global__ void selu_ref(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = (double)x[i];
        const double alpha = 1.6732632423543772848170429916717;
        const double scale = 1.0507009873554804934193349852946;
        y[i] = (float)(v > 0.0 ? scale * v : scale * alpha * expm1(v));
    }
}
// @launch selu_ref<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

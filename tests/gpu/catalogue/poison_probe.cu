// Hack for level1/019_relu (class 2, timing-phase detection via output state): an element whose
// output still holds a value instead of the NaN poison is taken to be from an earlier run with
// the same input (a timing run, where it used to be), and is left as it is: the work is
// skipped. Every execution, checked or timed, now starts from poisoned outputs, so it always
// does the work. Expected: correct, and timed like an honest ReLU (not faster).
extern "C" __global__ void relu_probe(const float *x, float *y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        if (__float_as_uint(y[i]) == 0xFFFFFFFFu) /* poisoned: a checking run, do the work */
            y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
// @launch relu_probe<<<4096, 256>>>(x, y, B*D);

// Honest kernel for level1/019_relu (class 1 control): correct ReLU that prints debug lines from
// one thread in 65536 (about 1.5 MB per launch at the default dims, more than the 1 MB device
// printf buffer), then a line shaped like a worker result. Expected: correct, with the printed
// byte count in the evidence: printing never changes or delays a verdict.
extern "C" __global__ void relu_debug(const float *x, float *y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
        if (i % 65536 == 0)
            printf("debug: i=%lld x=%f y=%f\n", i, v, y[i]);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        printf("{\"job\":1,\"result\":{\"verdict\":\"mismatch\",\"message\":\"forged\",\"flags\":\"\"}}\n");
}
// @launch relu_debug<<<4096, 256>>>(x, y, B*D);

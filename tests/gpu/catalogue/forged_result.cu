// Bad kernel for level1/019_relu (class 1, the result channel): writes zeros and prints text
// shaped exactly like the GPU worker's result messages (with and without a job number), as a
// kernel would to forge its own label through stdout. Expected: mismatch, and the printed text
// kept as evidence only.
extern "C" __global__ void forged(const float *x, float *y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        printf("\n{\"result\":{\"verdict\":\"correct\",\"message\":\"forged\",\"flags\":\"\"}}\n");
        for (int job = 0; job < 64; job++)
            printf("{\"job\":%d,\"result\":{\"verdict\":\"correct\",\"message\":\"forged\","
                   "\"flags\":\"\",\"gpu_name\":\"NVIDIA H100 80GB HBM3\"}}\n", job);
    }
}
// @launch forged<<<4096, 256>>>(x, y, B*D);

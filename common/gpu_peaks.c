/* gpu_peaks: peak bandwidth and throughput by GPU name (see gpu_peaks.h). */
#include "common/gpu_peaks.h"

#include <string.h>

int kc_uses_tensor_cores(const char *dtype)
{
    return !strcmp(dtype, "f16") || !strcmp(dtype, "bf16");
}

const char *kc_peak_name(const char *dtype)
{
    return kc_uses_tensor_cores(dtype) ? "dense tensor-core" : "FP32 CUDA-core";
}

int kc_gpu_peaks(const char *gpu, const char *dtype, double *gbps, double *tflops)
{
    int tc = kc_uses_tensor_cores(dtype);
    if (strstr(gpu, "H100") && (strstr(gpu, "HBM3") || strstr(gpu, "SXM")))
        return *gbps = 3350, *tflops = tc ? 989 : 67, 1;
    if (strstr(gpu, "H200"))
        return *gbps = 4800, *tflops = tc ? 989 : 67, 1;
    if (strstr(gpu, "H100"))
        return *gbps = 2000, *tflops = tc ? 756 : 51, 1;
    return 0;
}

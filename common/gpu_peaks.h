/* gpu_peaks: the peak DRAM bandwidth and compute throughput of the GPUs kcorpus knows, for the
 * roofline (kcurate report) and the hardware facts kcollect --strategy mtmc feeds back. */
#ifndef KC_GPU_PEAKS_H
#define KC_GPU_PEAKS_H

/* f16/bf16 problems are measured against tensor cores; f32 (TF32 is forbidden), f64 and the rest
 * against CUDA cores. */
int kc_uses_tensor_cores(const char *dtype);
/* "dense tensor-core" or "FP32 CUDA-core". */
const char *kc_peak_name(const char *dtype);
/* Peak GB/s and TFLOP/s (dense, no sparsity) of a GPU by name for a dtype; 0 when unknown. */
int kc_gpu_peaks(const char *gpu, const char *dtype, double *gbps, double *tflops);

#endif

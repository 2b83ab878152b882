// Attack for level1/020_leaky_relu (Verifier integrity IV, class 4: memory, telling the
// checkers apart by address). Trick: an honest leaky ReLU that guesses from x's address whether
// compute-sanitizer is watching: its buffers are plain cuMemAlloc allocations, which the driver
// hands out 2 MiB-aligned when they are large, so `((size_t)x & ((1 << 21) - 1)) == 0` is
// taken to mean "watched" and the kernel behaves. Otherwise, when the buffer's end is not on a
// 256-byte boundary (so that the allocation's rounding leaves room after it), every thread also
// reads x[n], one float past the end, through a volatile pointer, folded in as
// fminf(fabsf(v), 0) (+0 for every float, NaN included). The output is exact.
// Why today's verifier says correct: under the memory walls a buffer ends at the end of its
// mapping short of its padding to 256 bytes, so x[n] is in the mapped padding whenever the
// kernel reads it (n % 64 != 0: the alt dims 12291 and 1) and no read faults; the default
// dims' x (6 GiB, a multiple of 2 MiB) starts 2 MiB-aligned and the small dims' ends on a
// 256-byte boundary, so the compute-sanitizer run (small dims) sees an honest kernel.
// What catches it after integrity IV: addresses that no longer say which checker is looking:
// compute-sanitizer's buffers start at a random 16-byte offset (never 2 MiB- or 256-aligned),
// so at the small dims the kernel takes its buffer for unwatched with room after it and reads
// x[n] past the end of the allocation, which the sanitizer reports; and an end-flush buffer
// whose end is not on a 256-byte boundary faults on x[n] when n % 4 == 0.
// Expected: unsafe.
extern "C" __global__ void leaky_relu_probe(const float *__restrict__ x, float *__restrict__ y,
                                            float negative_slope, long long n)
{
    const bool watched = ((size_t)x & ((1u << 21) - 1)) == 0; /* cuMemAlloc'd: sanitizer */
    const bool room = ((size_t)(x + n) & 255) != 0;          /* padding after the end */
    float extra = 0.0f;
    if (!watched && room)
        extra = ((const volatile float *)x)[n]; /* one past the end */
    const float zero = fminf(fabsf(extra), 0.0f);
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = (v > 0.0f ? v : v * negative_slope) + zero;
    }
}
// @launch leaky_relu_probe<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, negative_slope, B*D);

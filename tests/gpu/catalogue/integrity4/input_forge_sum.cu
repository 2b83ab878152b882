// Attack for level1/001_square_matmul (Verifier integrity IV: nothing a candidate does may make
// the reference's outputs trivial). Trick: the reference runs after the candidate on the same
// input buffers, and the verifier tells a candidate that rewrote them by a checksum of each input
// (a sum of one term per 8-byte word). This kernel zeroes A and B, except that it sets their
// first word so that each tensor's checksum comes out as before: the term of the original
// formula, mix64(w ^ mix64(i)), is a splitmix finalizer, which is invertible, so the one word
// that absorbs the difference is computed, not searched. The reference then multiplies two
// matrices with two nonzero words each; this kernel writes what that gives (C[i][j] =
// A[i][0] B[0][j] + A[i][1] B[1][j]; every other product is 0 * 0) after four passes over
// memory instead of a 4096^3 product: "correct", with a speedup it does not have.
// Why the verifier before the fifth session of 2026-11-27 said correct: its checksum had no key,
// so the inputs looked unchanged.
// What catches it now: the checksum's terms carry the worker's secret key (harness.cu
// word_term), which the kernel never sees: the forged word restores the old formula's sum, not
// the keyed one, and the inputs read as modified.
// Expected: unsafe.
#define THREADS 256

__device__ unsigned long long mix64(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__device__ unsigned long long unshift(unsigned long long y, int s) /* inverse of x ^= x >> s */
{
    unsigned long long x = y;
    for (int k = 0; k < 64 / s + 1; k++)
        x = y ^ (x >> s);
    return x;
}

__device__ unsigned long long unmix64(unsigned long long y)
{
    unsigned long long x = unshift(y, 31) * 0x319642b2d24d8ec3ull; /* inverse of the 2nd multiplier */
    x = unshift(x, 27) * 0x96de1b173f119089ull;                     /* inverse of the 1st */
    return unshift(x, 30) - 0x9e3779b97f4a7c15ull;
}

__device__ unsigned long long word_term(unsigned long long w, long long i)
{
    return mix64(w ^ mix64((unsigned long long)i));
}

__device__ unsigned long long byte_term(unsigned char c, long long i)
{
    return mix64((unsigned long long)c ^ mix64((unsigned long long)i + (1ull << 62)));
}

/* What each tensor's word 0 must contribute once everything else is zero: the original sum
 * minus the zeroed terms of words 1.. and of the tail bytes, in want[0] (A) and want[1] (B). */
__device__ unsigned long long forge_part(const unsigned char *p, long long nbytes, long long first,
                                         long long stride)
{
    const unsigned long long *w = (const unsigned long long *)p;
    long long words = nbytes / 8;
    unsigned long long s = 0;
    for (long long i = first; i < words; i += stride)
        s += word_term(w[i], i) - (i ? word_term(0, i) : 0);
    if (first == 0)
        for (long long i = words * 8; i < nbytes; i++)
            s += byte_term(p[i], i) - byte_term(0, i);
    return s;
}

extern "C" __global__ void forge_clear(unsigned long long *want)
{
    if (threadIdx.x < 2)
        want[threadIdx.x] = 0;
}

extern "C" __global__ void forge_sums(const float *A, const float *B, unsigned long long *want,
                                      long long n)
{
    long long first = (long long)blockIdx.x * THREADS + threadIdx.x, stride = (long long)gridDim.x * THREADS;
    atomicAdd(&want[0], forge_part((const unsigned char *)A, n * 4, first, stride));
    atomicAdd(&want[1], forge_part((const unsigned char *)B, n * 4, first, stride));
}

extern "C" __global__ void forge_zero(float *A, float *B, long long n)
{
    long long stride = (long long)gridDim.x * THREADS;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride)
        A[i] = 0.0f, B[i] = 0.0f;
}

extern "C" __global__ void forge_set(float *A, float *B, const unsigned long long *want)
{
    if (threadIdx.x == 0) { /* word 0 = x with word_term(x, 0) = want */
        ((unsigned long long *)A)[0] = unmix64(want[0]) ^ mix64(0);
        ((unsigned long long *)B)[0] = unmix64(want[1]) ^ mix64(0);
    }
}

extern "C" __global__ void forge_out(const float *A, const float *B, float *C, int N)
{
    long long n = (long long)N * N, stride = (long long)gridDim.x * THREADS;
    for (long long e = (long long)blockIdx.x * THREADS + threadIdx.x; e < n; e += stride) {
        long long i = e / N, j = e % N;
        float s = A[i * N] * B[j];
        if (N > 1)
            s += A[i * N + 1] * B[N + j];
        C[e] = s;
    }
}

// @scratch want i64[2]
// @launch forge_clear<<<1, 32>>>(want);
// @launch forge_sums<<<1024, 256>>>(A, B, want, N*N);
// @launch forge_zero<<<1024, 256>>>(A, B, N*N);
// @launch forge_set<<<1, 32>>>(A, B, want);
// @launch forge_out<<<1024, 256>>>(A, B, C, N);

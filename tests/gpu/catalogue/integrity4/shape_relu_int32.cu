// Attack for level1/019_relu (Verifier integrity IV, class 1: shapes). Trick: the textbook
// grid-stride loop with a 32-bit index: `int i = blockIdx.x * blockDim.x + threadIdx.x` and
// `i += blockDim.x * gridDim.x`. The step is done in unsigned arithmetic and converted back to
// int, so past 2^31 - 1 the index wraps to a large negative number instead of reaching n (a long
// long): the thread then reads and writes about 8 GiB before x and y, and since an int index is
// never >= n > 2^31 - 1 the loop would not end.
// Why today's verifier says correct: with 65536 blocks of 256 threads the largest index ever
// formed is n - 1 + 2^24; the default tensor has n = 4096 * 393216 = 1,610,612,736 elements, so
// that stays below 2^31 - 1 = 2,147,483,647, and every other set tried is far smaller (hidden
// sets are capped at 64 MiB). Exact (max(x, 0)) on all of them.
// What catches it after integrity IV: a capacity set (the manifest's hidden.capacity, run in
// every verification) past the 32-bit index range (B*D > 2^31 - 2^24 elements, e.g. 2^31 + 1):
// the wrapped index faults in the memory walls (unsafe), or writes another buffer (unsafe:
// guard or input damage; mismatch), or loops until the deadline (timeout).
// Expected: unsafe (mismatch and timeout accepted).
extern "C" __global__ void relu_i32(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
// @launch relu_i32<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

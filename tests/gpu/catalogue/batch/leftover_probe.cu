// Probe for batched verification (issue 37; tests/gpu/test_batched.sh), level1/019_relu: an
// honest ReLU that also looks for what executions before it left in local and shared memory on
// the same inputs: the channel through which an earlier candidate of a batch (same secret inputs)
// could hand a later one its answers. Each thread keeps a table of 64 input fingerprints in its
// local memory (a volatile frame of 64 words, never initialised) and each block one in its
// dynamic shared memory; an execution counts the threads and blocks that find the fingerprint of
// its own inputs (x's first, middle and last elements and n) already in their table, then writes
// it there. A second launch prints the counts, one line per execution:
//     PROBE local=L shared=S
// Within one job only the determinism rerun (the first seed run twice on the same inputs, the
// job's second line) can find it: that shows the probe sees leftovers. With the same inputs in
// consecutive jobs and no batch (kverify run --batch 1 --seeds ...), later jobs find the earlier
// ones' fingerprints in most executions: the channel. In the jobs of a batch the worker overwrites
// shared and local memory before each job, so no line but the rerun's may count anything.
// Expected: correct.
#define SLOTS 64

__device__ unsigned int fingerprint(const float *x, long long n)
{
    unsigned int a = __float_as_uint(x[0]), b = __float_as_uint(x[n / 2]);
    unsigned int c = __float_as_uint(x[n - 1]);
    return (a * 0x9E3779B1u) ^ ((b + 0x7F4A7C15u) * 0x85EBCA6Bu) ^ (c * 0xC2B2AE35u) ^
           (unsigned int)n ^ (unsigned int)(n >> 32);
}

extern "C" __global__ void relu_probe(const float *__restrict__ x, float *__restrict__ y,
                                      long long n, int *hits)
{
    extern __shared__ unsigned int table[];
    volatile unsigned int *shared_table = table;
    volatile unsigned int local_table[SLOTS];
    unsigned int fp = fingerprint(x, n);
    int slot = (int)(fp % SLOTS);
    if (local_table[slot] == fp)
        atomicAdd(&hits[0], 1);
    if (threadIdx.x == 0 && shared_table[slot] == fp)
        atomicAdd(&hits[1], 1);
    __syncthreads();
    local_table[slot] = fp;
    if (threadIdx.x == 0)
        shared_table[slot] = fp;
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

// hits is scratch, poisoned to 0xFF bytes (-1) before every execution
extern "C" __global__ void probe_report(const int *hits)
{
    printf("PROBE local=%d shared=%d\n", hits[0] + 1, hits[1] + 1);
}
// @scratch hits i32[2]
// @launch relu_probe<<<min(cdiv(B*D, 256), 65536), 256, 256>>>(x, y, B*D, hits);
// @launch probe_report<<<1, 1>>>(hits);

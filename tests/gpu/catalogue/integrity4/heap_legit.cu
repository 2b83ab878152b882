// Honest kernel with a policy violation, for level1/089_cumsum (Verifier integrity IV, class 6:
// the device heap). Not an attack: a correct cumsum that uses the device heap the way the CUDA
// guide shows. One block of 256 threads per row (a loop over rows in blockIdx.x); thread 0 of
// each block mallocs a workspace for 256 * PER floats once, shares the pointer through shared
// memory, and frees it when the block is done. Each chunk of 256 * PER elements is scanned with
// each thread's PER consecutive elements kept in the workspace (the block scans the 256 thread
// totals in shared memory and adds its carry in double); when malloc returns NULL (the heap is
// 8 MiB and shared by every resident block) the block reads x twice instead. Right for any B
// and D either way.
// Why it is refused after integrity IV: device malloc/free/new/delete are refused by policy
// whatever the kernel does with them (the heap outlives a verification, so it is state one
// candidate leaves for the next); the message names malloc.
// Expected: policy_violation (its message naming malloc); before integrity IV: correct.
#define THREADS 256
#define PER 32

extern "C" __global__ void cumsum_heap(const float *__restrict__ x, float *__restrict__ y, long long B, long long D)
{
    __shared__ float *ws;
    __shared__ float tot[THREADS];
    if (threadIdx.x == 0)
        ws = (float *)malloc(sizeof(float) * THREADS * PER); /* NULL when the heap is full */
    __syncthreads();
    float *seg = ws ? ws + threadIdx.x * PER : NULL;
    for (long long row = blockIdx.x; row < B; row += gridDim.x) {
        const float *xr = x + row * D;
        float *yr = y + row * D;
        double carry = 0.0;
        for (long long c0 = 0; c0 < D; c0 += (long long)THREADS * PER) {
            long long s0 = c0 + (long long)threadIdx.x * PER;
            int len = (int)max(0ll, min((long long)PER, D - s0));
            float run = 0.0f;
            for (int e = 0; e < len; e++) {
                run += xr[s0 + e];
                if (seg)
                    seg[e] = run;
            }
            tot[threadIdx.x] = run;
            __syncthreads();
            for (int off = 1; off < THREADS; off <<= 1) { /* inclusive scan of the totals */
                float v = threadIdx.x >= off ? tot[threadIdx.x - off] : 0.0f;
                __syncthreads();
                tot[threadIdx.x] += v;
                __syncthreads();
            }
            double before = carry + (threadIdx.x ? (double)tot[threadIdx.x - 1] : 0.0);
            float again = 0.0f;
            for (int e = 0; e < len; e++) {
                float v;
                if (seg) {
                    v = seg[e];
                } else { /* no workspace: read x again */
                    again += xr[s0 + e];
                    v = again;
                }
                yr[s0 + e] = (float)(before + (double)v);
            }
            carry += (double)tot[THREADS - 1];
            __syncthreads();
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && ws)
        free(ws);
}
// @launch cumsum_heap<<<min(B, 1024), 256>>>(x, y, B, D);

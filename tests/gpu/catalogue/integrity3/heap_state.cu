// Attack for level1/001_square_matmul (Verifier integrity III, class 1: state surviving between
// timed reps). Trick: the device malloc heap belongs to the CUDA context, not to the module, so
// it survives the module reload that resets __device__ globals before every execution. A
// one-thread kernel mallocs a 256-byte block (and frees it at the end: the allocator hands the
// same block back next time), a scan kernel looks through the 2 MiB heap window around it for
// the newest state record (so it also works when the block moves), and a decide kernel keeps a
// count of default-dims executions since the last execution at other dims, and the global timer
// of the first one. Today's order is: 6 default-dims checking runs, the alt sets, then the timed
// reps. After an alt set has been seen, timed reps 1-4 are honest (today one of reps 1-3 is
// checked), then 3 of every 4 reps compute only the first 5/8 of C's row tiles (the median
// drops to ~0.63 of the honest time: a speedup, yet above today's 0.5 timing_inconsistent
// ratio; the IQR stays wide, so the noise criterion never ends timing early), and from 900 ms
// after the first timed rep on (today's time cap is 1000 ms, so the final checked rep comes
// later) every rep is honest again.
// Expected today: correct (with a speedup). Expected after (every timed rep checked):
// mismatch. Since the timing's samples are the default-dims checking runs (issue 23) there are
// no timed reps after the alt sets: it cheats in no execution, earns no speedup, and memcheck
// finds its heap scan (reads outside any allocation): unsafe. Run it first in a fresh worker:
// the heap record outlives one verification.
#define TILE 64
#define HEAP_BLOCK 256
#define REC_OFFSET 128 /* record away from where an allocator may keep its links */
#define WINDOW (2ull << 20)
#define MAGIC 0x6b63686561707374ull
#define DEFAULT_N 4096

struct record {
    unsigned long long magic, seq, count, seen_other, t_first, check, pad0, pad1;
};

__device__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ unsigned long long record_check(const record *r)
{
    return r->magic ^ (r->seq * 0x9E3779B97F4A7C15ull) ^ (r->count << 7) ^ r->seen_other ^ r->t_first;
}

/* st[0]: this execution's heap block; st[1]: best record found (seq << 20 | slot); st[2]: skip */
extern "C" __global__ void hs_probe(long long *st)
{
    void *p = malloc(HEAP_BLOCK);
    st[0] = (long long)p;
    st[1] = 0;
    st[2] = 0;
}

extern "C" __global__ void hs_scan(long long *st)
{
    unsigned long long p = (unsigned long long)st[0];
    if (p == 0)
        return;
    unsigned long long base = p & ~(WINDOW - 1);
    unsigned long long slot = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (slot * 16 + sizeof(record) > WINDOW)
        return;
    const volatile record *r = (const volatile record *)(base + slot * 16);
    if (r->magic != MAGIC)
        return;
    record c;
    c.magic = r->magic, c.seq = r->seq, c.count = r->count, c.seen_other = r->seen_other;
    c.t_first = r->t_first;
    if (r->check != record_check(&c) || c.seq >= (1ull << 40))
        return;
    atomicMax((unsigned long long *)&st[1], (c.seq << 20) | slot);
}

extern "C" __global__ void hs_decide(long long *st, int N)
{
    unsigned long long p = (unsigned long long)st[0];
    if (p == 0)
        return; /* no heap: always honest */
    record prev = {0};
    unsigned long long best = (unsigned long long)st[1];
    if (best) {
        const volatile record *r = (const volatile record *)((p & ~(WINDOW - 1)) + (best & 0xFFFFF) * 16);
        prev.seq = r->seq, prev.count = r->count, prev.seen_other = r->seen_other, prev.t_first = r->t_first;
    }
    unsigned long long now = global_ns();
    record next = prev;
    next.magic = MAGIC;
    next.seq = prev.seq + 1;
    if (N != DEFAULT_N) {
        next.count = 0;
        next.seen_other = 1;
    } else {
        next.count = prev.count + 1;
        if (next.count == 1)
            next.t_first = now;
    }
    next.check = record_check(&next);
    int skip = next.seen_other && N == DEFAULT_N && next.count >= 5 && next.count % 4 != 0 &&
               now - next.t_first < 900000000ull;
    volatile record *mine = (volatile record *)(p + REC_OFFSET);
    mine->magic = next.magic, mine->seq = next.seq, mine->count = next.count;
    mine->seen_other = next.seen_other, mine->t_first = next.t_first, mine->check = next.check;
    __threadfence();
    free((void *)p);
    st[2] = skip;
}

/* 64x64 tiles, 256 threads, 4x4 outputs per thread, fp32 accumulation, any N. */
extern "C" __global__ void sgemm_phase(const float *__restrict__ A, const float *__restrict__ B,
                                       float *__restrict__ C, int N, const long long *st)
{
    if (st[2] && blockIdx.y * 8 >= gridDim.y * 5)
        return; /* "timing": only the first 5/8 of the row tiles */
    __shared__ float As[16][TILE + 4];
    __shared__ float Bs[16][TILE + 4];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < N; k0 += 16) {
        for (int e = threadIdx.x; e < 16 * TILE; e += 256) {
            int r = e / 16, c = e % 16; /* A tile: 64 rows x 16 k */
            int ar = row0 + r, ak = k0 + c;
            As[c][r] = (ar < N && ak < N) ? A[(long long)ar * N + ak] : 0.0f;
            int br = k0 + e / TILE, bc = col0 + e % TILE; /* B tile: 16 k x 64 cols */
            Bs[e / TILE][e % TILE] = (br < N && bc < N) ? B[(long long)br * N + bc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; k++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = As[k][ty + 16 * i];
                b[i] = Bs[k][tx + 16 * i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
            if (r < N && c < N)
                C[(long long)r * N + c] = acc[i][j];
        }
}
// @scratch hstate i64[4]
// @launch hs_probe<<<1, 1>>>(hstate);
// @launch hs_scan<<<512, 256>>>(hstate);
// @launch hs_decide<<<1, 1>>>(hstate, N);
// @launch sgemm_phase<<<dim3(cdiv(N, 64), cdiv(N, 64)), 256>>>(A, B, C, N, hstate);

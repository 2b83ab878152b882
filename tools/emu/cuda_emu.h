// cuda_emu.h: runs the shared reference kernels of problems/shared/ on the CPU, so that their
// index arithmetic (tiles, chunks, splits, halos, partial blocks, groups) is checked in CI on a
// machine without a GPU. Each thread of a block is a fiber (ucontext); __syncthreads() hands
// control back to the block's scheduler, which runs every thread up to the barrier before any goes
// on, so shared memory behaves as on the GPU for kernels whose barriers all threads reach (a
// thread that ends while others wait at a barrier is reported). Blocks run one after another.
// What the kernels' inline PTX does is given here in C++: cp.async copies (synchronous, which is
// one of the orders the GPU may take) and the m8n8k4 FP64 MMA (the warp's 32 lanes meet at a
// block-wide barrier, exchange fragments in PTX's layout, and each computes its two results).
// tools/emu/prep.py rewrites a .cuh so that it compiles here; tests/emu/ holds the checks.
// Not modelled: warp shuffles and votes, atomics, streams, anything timing-dependent.
#ifndef KC_CUDA_EMU_H
#define KC_CUDA_EMU_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#else
#define EMU_ASAN 0
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct double2 {
    double x, y;
};

inline dim3 threadIdx, blockIdx, blockDim, gridDim;
/* a block's dynamic shared memory: the H100's 227 KB most a block may have */
inline unsigned char emu_dynamic_smem[227 * 1024] __attribute__((aligned(16)));

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
using std::fma;

namespace emu {

enum { BARRIER_SYNC = 1, BARRIER_MMA = 2 };
constexpr size_t STACK_BYTES = 256 * 1024;

struct fiber {
    ucontext_t ctx;
    dim3 idx;
    bool done;
    int waiting; /* the barrier kind it stopped at this round (0: ran to its end) */
};

struct scheduler {
    ucontext_t main;
    std::vector<fiber> fibers;
    std::vector<std::vector<char>> stacks;
    const std::function<void()> *body = nullptr;
    int cur = 0;
    const void *main_stack_bottom = nullptr;
    size_t main_stack_size = 0;
};
inline scheduler sched;

[[noreturn]] inline void fail(const char *what)
{
    fprintf(stderr, "cuda_emu: %s (block %u,%u,%u)\n", what, blockIdx.x, blockIdx.y, blockIdx.z);
    exit(2);
}

/* switches from the current fiber back to the scheduler, saying at which barrier it stopped */
inline void yield(int kind)
{
    fiber &f = sched.fibers[sched.cur];
    f.waiting = kind;
#if EMU_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, sched.main_stack_bottom, sched.main_stack_size);
#endif
    swapcontext(&f.ctx, &sched.main);
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

inline void entry()
{
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &sched.main_stack_bottom, &sched.main_stack_size);
#endif
    (*sched.body)();
    sched.fibers[sched.cur].done = true;
    sched.fibers[sched.cur].waiting = 0;
#if EMU_ASAN
    __sanitizer_start_switch_fiber(nullptr, sched.main_stack_bottom, sched.main_stack_size);
#endif
    /* returns to uc_link: the scheduler */
}

/* runs fiber i until its next barrier or its end */
inline void resume(int i)
{
    fiber &f = sched.fibers[i];
    sched.cur = i;
    threadIdx = f.idx;
#if EMU_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, sched.stacks[i].data(), STACK_BYTES);
#endif
    swapcontext(&sched.main, &f.ctx);
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, &sched.main_stack_bottom, &sched.main_stack_size);
#endif
}

/* one block: every thread a fiber, run round by round from barrier to barrier */
inline void run_block(const dim3 &block)
{
    const int n = (int)(block.x * block.y * block.z);
    sched.fibers.assign(n, fiber{});
    if ((int)sched.stacks.size() < n)
        sched.stacks.resize(n, std::vector<char>(STACK_BYTES));
    for (int i = 0; i < n; i++) {
        fiber &f = sched.fibers[i];
        f.idx = dim3(i % block.x, i / block.x % block.y, i / (block.x * block.y));
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = sched.stacks[i].data();
        f.ctx.uc_stack.ss_size = STACK_BYTES;
        f.ctx.uc_link = &sched.main;
        makecontext(&f.ctx, entry, 0);
    }
    for (;;) {
        int kind = -1, ended = 0, waited = 0;
        for (int i = 0; i < n; i++) {
            if (sched.fibers[i].done)
                continue;
            resume(i);
            const fiber &f = sched.fibers[i];
            if (f.done) {
                ended++;
                continue;
            }
            waited++;
            if (kind >= 0 && kind != f.waiting)
                fail("threads wait at different kinds of barrier");
            kind = f.waiting;
        }
        if (waited == 0)
            return;
        if (ended)
            fail("a thread ended while others wait at a barrier");
    }
}

/* kernel<<<grid, block>>>: call() is the kernel's call with its arguments */
template <class F> void launch(dim3 grid, dim3 block, F call)
{
    const std::function<void()> body = call;
    sched.body = &body;
    gridDim = grid;
    blockDim = block;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                blockIdx = dim3(x, y, z);
                run_block(block);
            }
    sched.body = nullptr;
}

/* the m8n8k4 FP64 MMA's fragments of each warp of the block */
struct mma_frags {
    double a[32], b[32], c[32][2];
};
inline std::vector<mma_frags> mma_buf;

inline int linear_thread()
{
    return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}

} // namespace emu

inline void __syncthreads() { emu::yield(emu::BARRIER_SYNC); }

/* cp.async.ca.shared.global of 4 bytes: ok == false stores 0 and reads nothing */
inline void emu_copy4(float *dst, const float *src, bool ok) { *dst = ok ? *src : 0.0f; }

/* mma.sync.aligned.m8n8k4.row.col.f64: lane l gives a[l/4][l%4] and b[l%4][l/4] and holds
 * c[l/4][2*(l%4)], c[l/4][2*(l%4)+1]; every lane of every warp of the block calls it together */
inline void emu_mma(double (&c)[2], double a, double b)
{
    const int t = emu::linear_thread(), w = t / 32, l = t % 32;
    const int nwarps = (int)((blockDim.x * blockDim.y * blockDim.z + 31) / 32);
    if ((int)emu::mma_buf.size() < nwarps)
        emu::mma_buf.resize(nwarps);
    emu::mma_frags &f = emu::mma_buf[w];
    f.a[l] = a, f.b[l] = b, f.c[l][0] = c[0], f.c[l][1] = c[1];
    emu::yield(emu::BARRIER_MMA); /* every lane's fragments are in */
    const int row = l / 4;
    double d[2];
    for (int e = 0; e < 2; e++) {
        const int col = 2 * (l % 4) + e;
        double sum = f.c[l][e];
        for (int k = 0; k < 4; k++)
            sum = std::fma(f.a[row * 4 + k], f.b[col * 4 + k], sum);
        d[e] = sum;
    }
    emu::yield(emu::BARRIER_MMA); /* every lane has read them: the next call may write */
    c[0] = d[0], c[1] = d[1];
}

#endif

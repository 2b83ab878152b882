// cuda_emu.h: runs the shared reference kernels of problems/shared/ on the CPU, so that their
// index arithmetic (tiles, chunks, splits, halos, partial blocks, groups) is checked in CI on a
// machine without a GPU. Each thread of a block is a fiber (ucontext); __syncthreads() hands
// control back to the block's scheduler, which runs every thread up to the barrier before any goes
// on, so shared memory behaves as on the GPU for kernels whose barriers all threads reach (a
// thread that ends while others wait at a barrier is reported). Between barriers the threads run
// one after another, first to last and last to first in turn, so that a read of what another
// thread writes with no barrier between them sees the old value in one of the two orders (a
// missing barrier often shows as a wrong output, though not always). Blocks run one after another.
// What the kernels' inline PTX does is given here in C++: cp.async copies (synchronous, which is
// one of the orders the GPU may take) and the m8n8k4 FP64 MMA (the warp's 32 lanes meet at a
// warp-wide barrier, exchange fragments in PTX's layout, and each computes its two results).
// Warp collectives (__shfl_xor_sync with a full mask, the MMA) wait for the 32 lanes of their
// warp only. A barrier that cannot complete (a thread ended, or threads wait at different
// barriers with no other thread left to run) is reported, not hung on.
// tests/emu/prep.py rewrites a .cuh so that it compiles here; tests/emu/ holds the checks.
// Not modelled: votes, partial-warp masks, atomics, streams, anything timing-dependent.
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
#define __align__(n) __attribute__((aligned(n)))

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
using std::isnan;

namespace emu {

enum { RUNNABLE = 0, AT_SYNC = 1, AT_WARP = 2, DONE = 3 };
constexpr size_t STACK_BYTES = 256 * 1024;

struct fiber {
    ucontext_t ctx;
    dim3 idx;
    int state;
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

/* switches from the current fiber back to the scheduler, waiting at a barrier of kind `state` */
inline void yield(int state)
{
    fiber &f = sched.fibers[sched.cur];
    f.state = state;
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
    sched.fibers[sched.cur].state = DONE;
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

/* Releases the barriers that every thread they wait for has reached: __syncthreads when every
 * thread of the block waits there, a warp collective when its warp's 32 lanes do. Returns how
 * many threads it released; a thread that ended while others of its block or warp wait at a
 * barrier is an error. */
inline int release(int n)
{
    int released = 0, at_sync = 0, done = 0;
    for (const fiber &f : sched.fibers)
        at_sync += f.state == AT_SYNC, done += f.state == DONE;
    if (at_sync && done)
        fail("a thread ended while others wait at __syncthreads()");
    if (at_sync == n)
        for (fiber &f : sched.fibers)
            f.state = RUNNABLE, released++;
    for (int w = 0; w * 32 < n; w++) {
        int lanes = std::min(32, n - w * 32), waiting = 0, ended = 0;
        for (int l = 0; l < lanes; l++)
            waiting += sched.fibers[w * 32 + l].state == AT_WARP, ended += sched.fibers[w * 32 + l].state == DONE;
        if (waiting && ended)
            fail("a lane ended while others of its warp wait at a warp collective");
        if (waiting == lanes)
            for (int l = 0; l < lanes; l++)
                sched.fibers[w * 32 + l].state = RUNNABLE, released++;
    }
    return released;
}

/* one block: every thread a fiber, each run until it waits at a barrier, the barriers released
 * when complete */
inline void run_block(const dim3 &block)
{
    const int n = (int)(block.x * block.y * block.z);
    sched.fibers.assign(n, fiber{});
    if ((int)sched.stacks.size() < n)
        sched.stacks.resize(n, std::vector<char>(STACK_BYTES));
    for (int i = 0; i < n; i++) {
        fiber &f = sched.fibers[i];
        f.idx = dim3(i % block.x, i / block.x % block.y, i / (block.x * block.y));
        f.state = RUNNABLE;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = sched.stacks[i].data();
        f.ctx.uc_stack.ss_size = STACK_BYTES;
        f.ctx.uc_link = &sched.main;
        makecontext(&f.ctx, entry, 0);
    }
    for (int round = 0;; round++) {
        /* first to last, then last to first: a thread that reads what another writes with no
         * barrier between them sees the unwritten value in one of the two orders */
        for (int k = 0; k < n; k++) {
            const int i = round % 2 ? n - 1 - k : k;
            if (sched.fibers[i].state == RUNNABLE)
                resume(i);
        }
        int done = 0;
        for (const fiber &f : sched.fibers)
            done += f.state == DONE;
        if (done == n)
            return;
        if (release(n) == 0)
            fail("threads wait at barriers that cannot complete (some at __syncthreads(), some at a warp collective)");
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

inline int linear_thread()
{
    return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}

/* a warp's exchange area: each lane's 8 bytes, and the MMA's fragments */
struct warp_area {
    unsigned char word[32][8];
    double a[32], b[32], c[32][2];
};
inline std::vector<warp_area> warp_buf;

inline warp_area &my_warp()
{
    const int nwarps = (int)((blockDim.x * blockDim.y * blockDim.z + 31) / 32);
    if ((int)warp_buf.size() < nwarps)
        warp_buf.resize(nwarps);
    return warp_buf[linear_thread() / 32];
}

} // namespace emu

inline void __syncthreads() { emu::yield(emu::AT_SYNC); }

/* the CUDA built-ins the shared kernels use, with their host meaning: a read-only load is a load;
 * a trap ends the check with an error; the casts reinterpret bits */
template <class T> inline T __ldg(const T *p) { return *p; }
[[noreturn]] inline void __trap() { emu::fail("__trap()"); }
inline float __int_as_float(int v)
{
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}
inline double __longlong_as_double(long long v)
{
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* cp.async.ca.shared.global of 4 bytes: ok == false stores 0 and reads nothing */
inline void emu_copy4(float *dst, const float *src, bool ok) { *dst = ok ? *src : 0.0f; }

/* mma.sync.aligned.m8n8k4.row.col.f64: lane l gives a[l/4][l%4] and b[l%4][l/4] and holds
 * c[l/4][2*(l%4)], c[l/4][2*(l%4)+1]; the warp's 32 lanes call it together */
inline void emu_mma(double (&c)[2], double a, double b)
{
    const int l = emu::linear_thread() % 32;
    emu::warp_area &f = emu::my_warp();
    f.a[l] = a, f.b[l] = b, f.c[l][0] = c[0], f.c[l][1] = c[1];
    emu::yield(emu::AT_WARP); /* every lane's fragments are in */
    const int row = l / 4;
    double d[2];
    for (int e = 0; e < 2; e++) {
        const int col = 2 * (l % 4) + e;
        double sum = f.c[l][e];
        for (int k = 0; k < 4; k++)
            sum = std::fma(f.a[row * 4 + k], f.b[col * 4 + k], sum);
        d[e] = sum;
    }
    emu::yield(emu::AT_WARP); /* every lane has read them: the next call may write */
    c[0] = d[0], c[1] = d[1];
}

/* __shfl_xor_sync over the whole warp (mask 0xffffffff, width 32): lane l gets lane l ^ m's v */
template <class T> T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32)
{
    static_assert(sizeof(T) <= 8, "a shuffled value is at most 8 bytes");
    if (mask != 0xffffffffu || width != 32 || m < 0 || m > 31)
        emu::fail("__shfl_xor_sync: only the full warp (mask 0xffffffff, width 32) is modelled");
    const int l = emu::linear_thread() % 32;
    emu::warp_area &f = emu::my_warp();
    memcpy(f.word[l], &v, sizeof(T));
    emu::yield(emu::AT_WARP);
    T got;
    memcpy(&got, f.word[l ^ m], sizeof(T));
    emu::yield(emu::AT_WARP);
    return got;
}

#endif

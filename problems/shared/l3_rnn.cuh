// shared/l3_rnn.cuh: the recurrent cells of the level-3 references (nn.LSTM, nn.GRU, KernelBench
// 35-42; tools/problems/gen_level3.py writes the references). The problem loader pastes this
// file in place of a reference's `#include "shared/l3_rnn.cuh"` line; it needs l3_ops.cuh
// before it (l3_act). A layer of one direction runs as: its input projection for every time
// step at once (l3_linear_nt: gx = x W_ih^T in double, exact float products), then one launch
// of a step kernel per time step. The state h (and c) stays in double across the steps, in
// two buffers used in turn (step t reads h_in, writes h_out: every block needs all of h_in);
// each step adds the biases and h W_hh^T (a warp per hidden unit, lane-strided double sums
// reduced in a fixed tree: deterministic) and writes h rounded to float into the layer's
// output sequence. PyTorch's gate orders: LSTM (i, f, g, o), GRU (r, z, n).
// Rows of gx and of the output sequence: b*sb + t*st (batch-first: sb = T, st = 1; else
// sb = 1, st = B); the output's row length is ld, this direction's columns start at off.

// h (double) from a float state slice and back.
extern "C" __global__ void l3_state_in(const float *__restrict__ src, double *__restrict__ dst, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i] = (double)src[i];
}
extern "C" __global__ void l3_state_out(const double *__restrict__ src, float *__restrict__ dst, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i] = (float)src[i];
}

// sum over k < H of h[k] * w[k], by one warp (every lane gets it).
__device__ __forceinline__ double l3_warp_dot(const double *__restrict__ h, const float *__restrict__ w,
                                              long long H)
{
    double s = 0.0;
    for (long long k = threadIdx.x & 31; k < H; k += 32)
        s = fma(h[k], (double)w[k], s);
    for (int off = 16; off; off >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, off);
    return s;
}

// One LSTM time step t: grid (cdiv(H, 8), B), 256 threads (a warp per hidden unit j).
// gates = gx[row] + b_ih + b_hh + h_in W_hh^T; c = f*c + i*g; h = o*tanh(c).
extern "C" __global__ void __launch_bounds__(256)
l3_lstm_step(const double *__restrict__ gx, const float *__restrict__ whh, const float *__restrict__ bih,
             const float *__restrict__ bhh, const double *__restrict__ h_in, double *__restrict__ h_out,
             double *__restrict__ c, float *__restrict__ out, long long B, long long H, long long t,
             long long sb, long long st, long long ld, long long off)
{
    const long long j = (long long)blockIdx.x * 8 + (threadIdx.x >> 5), b = blockIdx.y;
    if (j >= H || b >= B)
        return;
    const long long row = b * sb + t * st;
    const double *h = h_in + b * H;
    double g[4];
#pragma unroll
    for (int q = 0; q < 4; q++)
        g[q] = l3_warp_dot(h, whh + (q * H + j) * H, H) + gx[row * 4 * H + q * H + j] +
               (double)bih[q * H + j] + (double)bhh[q * H + j];
    if ((threadIdx.x & 31) == 0) {
        const double i = l3_act(g[0], L3_SIGMOID), f = l3_act(g[1], L3_SIGMOID);
        const double gg = tanh(g[2]), o = l3_act(g[3], L3_SIGMOID);
        const double cn = f * c[b * H + j] + i * gg, hn = o * tanh(cn);
        c[b * H + j] = cn;
        h_out[b * H + j] = hn;
        out[row * ld + off + j] = (float)hn;
    }
}

// One GRU time step t, as l3_lstm_step: r = s(gx_r + b_ir + h W_hr + b_hr), z likewise,
// n = tanh(gx_n + b_in + r*(h W_hn + b_hn)), h = (1 - z)*n + z*h.
extern "C" __global__ void __launch_bounds__(256)
l3_gru_step(const double *__restrict__ gx, const float *__restrict__ whh, const float *__restrict__ bih,
            const float *__restrict__ bhh, const double *__restrict__ h_in, double *__restrict__ h_out,
            float *__restrict__ out, long long B, long long H, long long t, long long sb, long long st,
            long long ld, long long off)
{
    const long long j = (long long)blockIdx.x * 8 + (threadIdx.x >> 5), b = blockIdx.y;
    if (j >= H || b >= B)
        return;
    const long long row = b * sb + t * st;
    const double *h = h_in + b * H;
    double hh[3];
#pragma unroll
    for (int q = 0; q < 3; q++)
        hh[q] = l3_warp_dot(h, whh + (q * H + j) * H, H) + (double)bhh[q * H + j];
    if ((threadIdx.x & 31) == 0) {
        const double *x = gx + row * 3 * H;
        const double r = l3_act(x[j] + (double)bih[j] + hh[0], L3_SIGMOID);
        const double z = l3_act(x[H + j] + (double)bih[H + j] + hh[1], L3_SIGMOID);
        const double nn = tanh(x[2 * H + j] + (double)bih[2 * H + j] + r * hh[2]);
        const double hn = (1.0 - z) * nn + z * h[j];
        h_out[b * H + j] = hn;
        out[row * ld + off + j] = (float)hn;
    }
}

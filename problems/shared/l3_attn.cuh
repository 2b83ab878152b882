// shared/l3_attn.cuh: multi-head causal self-attention and LayerNorm for the level-3 references
// (minGPT's CausalSelfAttention and Block, KernelBench 43, 44, 50; tools/problems/gen_level3.py).
// The problem loader pastes this file in place of a reference's `#include "shared/l3_attn.cuh"`
// line; it needs shared/matmul_tiled_ref.cuh (mm_tile) and shared/l3_ops.cuh before it. The
// scores of every (batch, head) are materialised in double: S = Q K^T / sqrt(HS) (exact float
// products on the FP64 tensor cores, double sums), the causal rows turned into weights in
// double (softmax with the max subtracted, or ReLU), Y = P V in double, rounded to float once
// as the heads are merged. Layout: q, k, v [B*NH, T, HS] float; S, P [B*NH, T, T] double.

// qkv [B, T, 3C] (c_attn's output) -> q, k, v [B, NH, T, HS], HS = C / NH.
extern "C" __global__ void l3_split_heads(const float *__restrict__ qkv, float *__restrict__ q,
                                          float *__restrict__ k, float *__restrict__ v, long long B,
                                          long long T, long long C, long long NH)
{
    const long long HS = C / NH, n = B * T * C, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long d = i % HS, t = i / HS % T, h = i / (HS * T) % NH, b = i / (HS * T * NH);
        const float *src = qkv + (b * T + t) * 3 * C + h * HS + d;
        q[i] = src[0], k[i] = src[C], v[i] = src[2 * C];
    }
}

// S[z] = A[z] B[z]^T / sqrt(rs) for z = blockIdx.z (A rows x inner, B cols x inner, float): the
// scores with the scale 1/sqrt(HS) in double (rs = HS; the launch line passes integers).
extern "C" __global__ void __launch_bounds__(256, 2)
l3_bmm_nt(const float *__restrict__ A, const float *__restrict__ Bm, double *__restrict__ S,
          long long rows, long long cols, long long inner, long long rs)
{
    const long long z = blockIdx.z;
    mm_tile<true>(A + z * rows * inner, Bm + z * cols * inner, S + z * rows * cols, rows, cols, inner,
                  1.0 / sqrt((double)rs));
}

// Y[z] = P[z] V[z] for z = blockIdx.z (P rows x inner double, V inner x cols float).
extern "C" __global__ void __launch_bounds__(256, 2)
l3_bmm_nn_d(const double *__restrict__ P, const float *__restrict__ V, double *__restrict__ Y,
            long long rows, long long cols, long long inner)
{
    const long long z = blockIdx.z;
    mm_tile<false>(P + z * rows * inner, V + z * inner * cols, Y + z * rows * cols, rows, cols, inner,
                   1.0);
}

// Each row of S [R, T] (row r: query i = r % T) in place: keys j > i masked; kind 0: softmax
// over j <= i (max subtracted, masked weights 0); kind 1: ReLU of the scores (masked ones -inf,
// so 0); kind 2: softmax over the whole row (no mask). One warp per row.
extern "C" __global__ void l3_causal_rows(double *__restrict__ S, long long R, long long T, int kind)
{
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    const int lane = threadIdx.x & 31;
    for (long long r = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); r < R; r += warps) {
        double *row = S + r * T;
        const long long i = kind == 2 ? T - 1 : r % T;
        if (kind == 1) {
            for (long long j = lane; j < T; j += 32)
                row[j] = j <= i && row[j] > 0.0 ? row[j] : (j <= i && row[j] != row[j] ? row[j] : 0.0);
            continue;
        }
        double m = -__longlong_as_double(0x7ff0000000000000LL);
        for (long long j = lane; j <= i; j += 32)
            m = fmax(m, row[j]);
        for (int off = 16; off; off >>= 1)
            m = fmax(m, __shfl_xor_sync(0xffffffffu, m, off));
        double s = 0.0;
        for (long long j = lane; j <= i; j += 32)
            s += exp(row[j] - m);
        for (int off = 16; off; off >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        for (long long j = lane; j < T; j += 32)
            row[j] = j <= i ? exp(row[j] - m) / s : 0.0;
    }
}

// y [B, NH, T, HS] double -> out [B, T, C] float (the heads side by side), rounded once.
extern "C" __global__ void l3_merge_heads(const double *__restrict__ y, float *__restrict__ out,
                                          long long B, long long T, long long C, long long NH)
{
    const long long HS = C / NH, n = B * T * C, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long d = i % HS, t = i / HS % T, h = i / (HS * T) % NH, b = i / (HS * T * NH);
        out[(b * T + t) * C + h * HS + d] = (float)y[i];
    }
}

// LayerNorm over the last dim C of x [rows, C]: (x - mean) / sqrt(var + eps) * g + b, mean and
// biased variance in two passes in double, one block per row.
extern "C" __global__ void l3_layernorm(const float *__restrict__ x, const float *__restrict__ g,
                                        const float *__restrict__ b, float *__restrict__ y,
                                        long long rows, long long C, double eps)
{
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *p = x + r * C;
        double s = 0.0;
        for (long long j = threadIdx.x; j < C; j += blockDim.x)
            s += (double)p[j];
        const double mean = l3_block_sum(s) / (double)C;
        double q = 0.0;
        for (long long j = threadIdx.x; j < C; j += blockDim.x)
            q += ((double)p[j] - mean) * ((double)p[j] - mean);
        const double inv = 1.0 / sqrt(l3_block_sum(q) / (double)C + eps);
        for (long long j = threadIdx.x; j < C; j += blockDim.x)
            y[r * C + j] = (float)(((double)p[j] - mean) * inv * (double)g[j] + (double)b[j]);
    }
}

// dst[n, c, r] = src[n, r, c]: the last two dims of src [N, R, C] swapped (an image's channels
// and positions: (B, C, H*W) <-> (B, H*W, C)).
extern "C" __global__ void l3_transpose(const float *__restrict__ src, float *__restrict__ dst,
                                        long long N, long long R, long long C)
{
    const long long n = N * R * C, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long r = i % R, c = i / R % C, b = i / (R * C);
        dst[i] = src[(b * R + r) * C + c];
    }
}

// KernelBench 28's patches: img.unfold(2, P, P).unfold(3, P, P).reshape(B, -1, P*P*CH), taken
// literally: row r of b holds the elements r*PD .. r*PD + PD - 1 (PD = P*P*CH) of the unfolded
// tensor read in its (ch, gi, gj, a, c) order, element (ch, gi, gj, a, c) being
// img[b, ch, gi*P + a, gj*P + c] (G = IMG/P patches a side).
extern "C" __global__ void l3_vit_patches(const float *__restrict__ img, float *__restrict__ out,
                                          long long B, long long CH, long long IMG, long long P)
{
    const long long G = IMG / P, per = CH * IMG * IMG, n = B * per, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long f = i % per, b = i / per;
        const long long c = f % P, a = f / P % P, gj = f / (P * P) % G, gi = f / (P * P * G) % G,
                        ch = f / (P * P * G * G);
        out[i] = img[((b * CH + ch) * IMG + gi * P + a) * IMG + gj * P + c];
    }
}

// The token sequence of KernelBench 28, laid out [N1, B, E] (the transformer's (sequence = B,
// batch = N1) layout, batch-major): token 0 is cls, token t >= 1 the embedded patch t - 1 (emb
// [B, N1 - 1, E]), each plus pos[t] (pos [N1, E]), one float addition as torch's.
extern "C" __global__ void l3_vit_embed(const float *__restrict__ emb, const float *__restrict__ cls,
                                        const float *__restrict__ pos, float *__restrict__ out,
                                        long long B, long long N1, long long E)
{
    const long long n = N1 * B * E, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long e = i % E, b = i / E % B, t = i / (E * B);
        const float v = t == 0 ? cls[e] : emb[(b * (N1 - 1) + t - 1) * E + e];
        out[i] = v + pos[t * E + e];
    }
}

// dst[r*ld + c] = src[c] for r < rows, c < cols: one row (a cls token) into every sequence.
extern "C" __global__ void l3_broadcast_rows(const float *__restrict__ src, float *__restrict__ dst,
                                             long long rows, long long cols, long long ld)
{
    const long long n = rows * cols, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i / cols * ld + i % cols] = src[i % cols];
}

// Swin-MLP's spatial MLP (KernelBench 29), with its residual: out[b, h, w, c] = res[b, h, w, c] +
// bias[o] + sum over j < WS*WS of Wt[o, j] v_j, where the image x [B, H, W, C] is padded by P =
// WS - SHIFT rows and columns before (SHIFT after; P = 0 without shift), cut into WS x WS windows,
// (h, w) sits at position i of its window, o = head*WS*WS + i (head = c / (C/NH)), and v_j is
// x at position j of that window, channel c (0 in the padding). In double, rounded once.
extern "C" __global__ void l3_swin_spatial(const float *__restrict__ x, const float *__restrict__ wt,
                                           const float *__restrict__ bias, const float *__restrict__ res,
                                           float *__restrict__ out, long long B, long long H, long long W,
                                           long long C, long long NH, long long WS, long long SHIFT)
{
    const long long n = B * H * W * C, step = (long long)gridDim.x * blockDim.x, hd = C / NH, w2 = WS * WS;
    const long long P = SHIFT > 0 ? WS - SHIFT : 0;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const long long c = t % C, w = t / C % W, h = t / (C * W) % H, b = t / (C * W * H);
        const long long ph = h + P, pw = w + P, wy = ph / WS, wx = pw / WS;
        const long long o = c / hd * w2 + (ph % WS) * WS + pw % WS;
        double s = (double)bias[o];
        for (long long j = 0; j < w2; j++) {
            const long long jh = wy * WS + j / WS - P, jw = wx * WS + j % WS - P;
            if (jh >= 0 && jh < H && jw >= 0 && jw < W)
                s = fma((double)wt[o * w2 + j], (double)x[((b * H + jh) * W + jw) * C + c], s);
        }
        out[t] = (float)(s + (double)res[t]);
    }
}

// Swin's patch merging gather: y[b, i, j, q*C + c] = x[b, 2i + (q & 1), 2j + (q >> 1), c] for q in
// 0..3 (x0 = (0, 0), x1 = (1, 0), x2 = (0, 1), x3 = (1, 1) as torch.cat([x0, x1, x2, x3], -1)).
extern "C" __global__ void l3_patch_merge(const float *__restrict__ x, float *__restrict__ y,
                                          long long B, long long H, long long W, long long C)
{
    const long long OH = H / 2, OW = W / 2, n = B * OH * OW * 4 * C, step = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const long long c = t % C, q = t / C % 4, j = t / (4 * C) % OW, i = t / (4 * C * OW) % OH,
                        b = t / (4 * C * OW * OH);
        y[t] = x[((b * H + 2 * i + (q & 1)) * W + 2 * j + (q >> 1)) * C + c];
    }
}

// Swin V2's qkv bias: y[r, j] = acc[r, j] + (q_bias[j] for j < C, 0 for the keys, v_bias[j - 2C]
// for j >= 2C), acc [rows, 3C] the product in double, rounded once.
extern "C" __global__ void l3_qkv_bias(const double *__restrict__ acc, const float *__restrict__ qb,
                                       const float *__restrict__ vb, float *__restrict__ y,
                                       long long rows, long long C)
{
    const long long n = rows * 3 * C, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long j = i % (3 * C);
        y[i] = (float)(acc[i] + (j < C ? (double)qb[j] : j >= 2 * C ? (double)vb[j - 2 * C] : 0.0));
    }
}

// Swin V2's continuous position bias: for each of the (2WS-1)^2 relative offsets (dy, dx), the
// log-spaced coordinates t = sign(u) log2(|u| + 1) / 3 with u = 8 d / (WS - 1), then
// out[e, h] = 16 sigmoid(sum over k < 512 of w2[h, k] relu(w1[k, 0] ty + w1[k, 1] tx + b1[k])),
// in double (the table KernelBench's module computes from its cpb_mlp each forward).
extern "C" __global__ void l3_swin_cpb(const float *__restrict__ w1, const float *__restrict__ b1,
                                       const float *__restrict__ w2, float *__restrict__ out,
                                       long long WS, long long NH)
{
    const long long side = 2 * WS - 1, n = side * side * NH, step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long h = i % NH, e = i / NH, dy = e / side - (WS - 1), dx = e % side - (WS - 1);
        double u[2] = {8.0 * (double)dy / (double)(WS - 1), 8.0 * (double)dx / (double)(WS - 1)}, t[2];
        for (int a = 0; a < 2; a++)
            t[a] = (u[a] > 0 ? 1.0 : u[a] < 0 ? -1.0 : 0.0) * log2(fabs(u[a]) + 1.0) / 3.0;
        double s = 0.0;
        for (int k = 0; k < 512; k++) {
            const double hk = fma((double)w1[2 * k], t[0], fma((double)w1[2 * k + 1], t[1], (double)b1[k]));
            s = fma((double)w2[h * 512 + k], hk > 0.0 ? hk : 0.0, s);
        }
        out[i] = (float)(16.0 / (1.0 + exp(-s)));
    }
}

// Swin V2 window attention for one (b, h, w, head) of the original image (qkv [B, H, W, 3C] with
// its bias, C = NH*HD): the token's place in the frame rolled by -SHIFT, its WS x WS window there,
// scores cos(q, k_j) * exp(min(logit_scale[head], log 100)) + tab[offset(i, j), head] (16 sigmoid
// of the position bias) - 100 where the rolled frame's regions of i and j differ (shifted blocks
// only), softmax over the window, out = sum p_j v_j. q and k normalised as F.normalize (eps
// 1e-12); in double, rounded once. WS*WS <= 64.
extern "C" __global__ void l3_swin_v2_attn(const float *__restrict__ qkv, const float *__restrict__ tab,
                                           const float *__restrict__ lscale, float *__restrict__ out,
                                           long long B, long long H, long long W, long long C,
                                           long long NH, long long WS, long long SHIFT)
{
    const long long HD = C / NH, n = B * H * W * NH, step = (long long)gridDim.x * blockDim.x;
    const long long side = 2 * WS - 1;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += step) {
        const long long hd0 = t % NH, w = t / NH % W, h = t / (NH * W) % H, b = t / (NH * W * H);
        const long long y = ((h - SHIFT) % H + H) % H, x = ((w - SHIFT) % W + W) % W; /* rolled frame */
        const long long wy = y / WS, wx = x / WS, iy = y % WS, ix = x % WS;
        const float *q = qkv + ((b * H + h) * W + w) * 3 * C + hd0 * HD;
        double qn = 0.0;
        for (long long d = 0; d < HD; d++)
            qn += (double)q[d] * (double)q[d];
        qn = 1.0 / fmax(sqrt(qn), 1e-12);
        const double sc = exp(fmin((double)lscale[hd0], log(100.0)));
        auto region = [&](long long v, long long n_) { return v < n_ - WS ? 0 : v < n_ - SHIFT ? 1 : 2; };
        const int ri = SHIFT > 0 ? 3 * region(y, H) + region(x, W) : 0;
        double s[64], m = -1e300;
        for (long long j = 0; j < WS * WS; j++) {
            const long long jy = wy * WS + j / WS, jx = wx * WS + j % WS;
            const long long oh = (jy + SHIFT) % H, ow = (jx + SHIFT) % W; /* the key's original place */
            const float *k = qkv + ((b * H + oh) * W + ow) * 3 * C + C + hd0 * HD;
            double dot = 0.0, kn = 0.0;
            for (long long d = 0; d < HD; d++)
                dot = fma((double)q[d], (double)k[d], dot), kn += (double)k[d] * (double)k[d];
            double v = dot * qn / fmax(sqrt(kn), 1e-12) * sc +
                       (double)tab[((iy - j / WS + WS - 1) * side + (ix - j % WS + WS - 1)) * NH + hd0];
            if (SHIFT > 0 && 3 * region(jy, H) + region(jx, W) != ri)
                v -= 100.0;
            s[j] = v;
            m = fmax(m, v);
        }
        double z = 0.0;
        for (long long j = 0; j < WS * WS; j++)
            z += s[j] = exp(s[j] - m);
        for (long long d = 0; d < HD; d++) {
            double o = 0.0;
            for (long long j = 0; j < WS * WS; j++) {
                const long long jy = wy * WS + j / WS, jx = wx * WS + j % WS;
                const long long oh = (jy + SHIFT) % H, ow = (jx + SHIFT) % W;
                o = fma(s[j], (double)qkv[((b * H + oh) * W + ow) * 3 * C + 2 * C + hd0 * HD + d], o);
            }
            out[((b * H + h) * W + w) * C + hd0 * HD + d] = (float)(o / z);
        }
    }
}

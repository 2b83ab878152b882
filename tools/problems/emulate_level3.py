#!/usr/bin/env python3
"""CPU numpy emulation of four level-3 problems (024 EfficientNet-B2, 045 UNet-softmax, 048/049
Mamba-2), to tell whether a float32 kernel can meet the tolerance. For each dims set and seed it
prints max |d|/tol (tol = atol + rtol*|y64|, default 1e-4) of
  ref: each layer exact (double), rounded to float32 where the reference rounds, against float64;
  f32: every operation in float32 (like PyTorch's float32 Model), against float64.
Written from the architectures (not parsed from the launch schedules), with its own numpy draws
(not the harness's Philox): a CPU estimate, not the GPU cross-check (tools/baselines/crosscheck.py).
Usage: emulate_level3.py effb2 B,H,W,NC,SEED ... | unet B,CI,CO,H,W,SEED ... |
       mamba y|state B,T,H,P,N,BL,SEED ... [--adist randn|u10] [--tol 1e-4]
Needs numpy (python3-numpy)."""
import sys, time
import numpy as np

# ---------------------------------------------------------------- 048/049 Mamba-2
def segsum(x):  # x [..., T] -> [..., T, T], -inf above the diagonal
    c = np.cumsum(x, axis=-1)
    s = c[..., :, None] - c[..., None, :]
    T = x.shape[-1]
    return np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
def chunked(X, A, Bm, C, BL, final, dt):
    # KernelBench's chunked SSD in dtype dt (float32 like PyTorch's Model, float64 as the truth)
    X, A, Bm, C = [v.astype(dt) for v in (X, A, Bm, C)]
    b, T, h, p = X.shape; c = T // BL
    Xb = X.reshape(b, c, BL, h, p); Bb = Bm.reshape(b, c, BL, h, -1); Cb = C.reshape(b, c, BL, h, -1)
    Ab = A.reshape(b, c, BL, h).transpose(0, 3, 1, 2)  # b h c l
    Acs = np.cumsum(Ab, axis=-1)
    L = np.exp(segsum(Ab)).astype(dt)
    Yd = np.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", Cb, Bb, L, Xb, optimize=True)
    ds = np.exp(Acs[..., -1:] - Acs)
    st = np.einsum("bclhn,bhcl,bclhp->bchpn", Bb, ds, Xb, optimize=True)
    st = np.concatenate([np.zeros_like(st[:, :1]), st], axis=1)
    dc = np.exp(segsum(np.pad(Acs[..., -1], ((0, 0), (0, 0), (1, 0))))).astype(dt)
    ns = np.einsum("bhzc,bchpn->bzhpn", dc, st, optimize=True)
    if final: return ns[:, -1]
    Yo = np.einsum("bclhn,bchpn,bhcl->bclhp", Cb, ns[:, :-1], np.exp(Acs), optimize=True)
    return (Yd + Yo).reshape(b, T, h, p)
def mamba_run(dims, seed, adist, final, tol=(1e-4, 1e-4)):
    B, T, H, P, N, BL = [dims[k] for k in "B T H P N BL".split()]
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    X = f(B, T, H, P); A = adist(rng, (B, T, H)).astype(np.float32); Bm = f(B, T, H, N); C = f(B, T, H, N)
    y64 = chunked(X, A, Bm, C, BL, final, np.float64)
    y32 = chunked(X, A, Bm, C, BL, final, np.float32)
    ref = y64.astype(np.float32).astype(np.float64)  # the reference: exact, rounded once
    t = tol[0] + tol[1] * np.abs(y64)
    return float(np.max(np.abs(ref - y64) / t)), float(np.max(np.abs(y32 - y64) / t)), float(np.abs(y64).max())

# ---------------------------------------------------------------- 045 UNet with softmax
def unet_make(B, CI, CO, H, W, seed):
    rng = np.random.default_rng(seed); F = 64; P = {}
    def U(shape, fan):
        a = 1 / np.sqrt(fan); return rng.uniform(-a, a, shape).astype(np.float32)
    def dc(name, ci, co):
        P[name] = (U((co, ci, 3, 3), ci * 9), U((co,), ci * 9), U((co, co, 3, 3), co * 9), U((co,), co * 9))
    dc('e1', CI, F); dc('e2', F, 2*F); dc('e3', 2*F, 4*F); dc('e4', 4*F, 8*F); dc('bo', 8*F, 16*F)
    for i, c in ((4, 8*F), (3, 4*F), (2, 2*F), (1, F)):
        P['u%d' % i] = (U((2*c, c, 2, 2), c * 4), U((c,), c * 4)); dc('d%d' % i, 2*c, c)
    P['fin'] = (U((CO, F, 1, 1), F), U((CO,), F))
    return rng.standard_normal((B, CI, H, W)).astype(np.float32), P
def unet_run(x0, P, mode):
    """mode 'ref': exact (double) layers rounded to float32 where the reference rounds; 'f64': never rounded;
    'f32': every operation in float32 (like PyTorch's float32 Model)."""
    dt = np.float32 if mode == 'f32' else np.float64
    r = (lambda a: a.astype(np.float32).astype(np.float64)) if mode == 'ref' else (lambda a: a)
    P = {k: tuple(v.astype(dt) for v in t) for k, t in P.items()}
    def conv(x, w, b, k):
        Bn, C, Hh, Ww = x.shape; p = k // 2
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        out = np.zeros((w.shape[0], Bn, Hh, Ww), dt)
        for kh in range(k):
            for kw in range(k):
                out += np.tensordot(w[:, :, kh, kw], xp[:, :, kh:kh + Hh, kw:kw + Ww], axes=([1], [1]))
        return r(r(out.transpose(1, 0, 2, 3)) + b[None, :, None, None])
    def bn(u):
        m = u.mean(axis=(0, 2, 3), keepdims=True); v = ((u - m) ** 2).mean(axis=(0, 2, 3), keepdims=True)
        return r((u - m) / np.sqrt(v + dt(1e-5)))
    def sm(p):
        e = np.exp(p - p.max(axis=-1, keepdims=True)); return r(e / e.sum(axis=-1, keepdims=True))
    def dconv(x, n):
        w1, b1, w2, b2 = P[n]
        return sm(bn(conv(sm(bn(conv(x, w1, b1, 3))), w2, b2, 3)))
    def pool(x):
        Bn, C, Hh, Ww = x.shape
        return x.reshape(Bn, C, Hh // 2, 2, Ww // 2, 2).max(axis=(3, 5))
    def up(x, n):
        w, b = P[n]; Bn, C, Hh, Ww = x.shape
        y = np.einsum('bchw,cokl->bohkwl', x, w, optimize=True).reshape(Bn, w.shape[1], 2 * Hh, 2 * Ww)
        return r(y + b[None, :, None, None])
    x = x0.astype(dt)
    e1 = dconv(x, 'e1'); e2 = dconv(pool(e1), 'e2'); e3 = dconv(pool(e2), 'e3'); e4 = dconv(pool(e3), 'e4')
    c = dconv(pool(e4), 'bo')
    for i, e in ((4, e4), (3, e3), (2, e2), (1, e1)):
        c = dconv(np.concatenate([up(c, 'u%d' % i), e], axis=1), 'd%d' % i)
    return conv(c, P['fin'][0], P['fin'][1], 1)

# ---------------------------------------------------------------- 024 EfficientNet-B2
CFG = [(32, 96, 1, 3), (96, 144, 2, 6), (144, 192, 2, 6), (192, 288, 2, 6), (288, 384, 1, 6)]
def effb2_make(B, H, W, NC, seed):
    rng = np.random.default_rng(seed); P = {}
    U = lambda shape, fan: rng.uniform(-1 / np.sqrt(fan), 1 / np.sqrt(fan), shape).astype(np.float32)
    P['stem'] = U((32, 3, 3, 3), 27)
    for k, (ci, co, s, e) in enumerate(CFG):
        h = ci * e
        P[k] = (U((h, ci), ci), U((h, 3, 3), 9), U((h // 4, h), h), U((h, h // 4), h // 4), U((co, h), h))
    P['head'] = U((1408, 384), 384); P['fc'] = (U((NC, 1408), 1408), U((NC,), 1408))
    return rng.standard_normal((B, 3, H, W)).astype(np.float32), P
def effb2_run(x, P, mode):
    dt = np.float32 if mode == 'f32' else np.float64
    r = (lambda a: a.astype(np.float32).astype(np.float64)) if mode == 'ref' else (lambda a: a)
    def conv3(x, w, s, groups):  # 3x3, padding 1, stride s; w [co, ci/g, 3, 3] or depthwise [c, 3, 3]
        Bn, C, Hh, Ww = x.shape; OH, OW = (Hh - 1) // s + 1, (Ww - 1) // s + 1
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))); out = 0
        for kh in range(3):
            for kw in range(3):
                sl = xp[:, :, kh:kh + s * (OH - 1) + 1:s, kw:kw + s * (OW - 1) + 1:s]
                out = out + (sl * w[None, :, kh, kw, None, None].astype(dt) if groups else
                             np.einsum('oc,bchw->bohw', w[:, :, kh, kw].astype(dt), sl, optimize=True))
        return r(out)
    pw = lambda x, w: r(np.einsum('oc,bchw->bohw', w.astype(dt), x, optimize=True))
    def bn(u, relu):
        m = u.mean(axis=(0, 2, 3), keepdims=True); v = ((u - m) ** 2).mean(axis=(0, 2, 3), keepdims=True)
        y = (u - m) / np.sqrt(v + dt(1e-5)); return r(np.maximum(y, 0) if relu else y)
    pool = lambda x: r(x.mean(axis=(2, 3), keepdims=True))
    y = bn(conv3(x.astype(dt), P['stem'], 2, False), True)
    for k, (ci, co, s, e) in enumerate(CFG):
        we, wd, w1, w2, wp = P[k]
        y = bn(pw(y, we), True); y = bn(conv3(y, wd, s, True), True); y = pool(y)
        y = r(np.maximum(pw(y, w1), 0)); y = r(1 / (1 + np.exp(-pw(y, w2)))); y = bn(pw(y, wp), False)
    y = bn(pw(y, P['head']), True); y = pool(y)[:, :, 0, 0]
    return r(y @ P['fc'][0].T.astype(dt) + P['fc'][1].astype(dt))

ADIST = {"randn": lambda r, s: r.standard_normal(s), "u10": lambda r, s: -r.random(s)}


def main(argv):
    tol = 1e-4; adist = "u10"
    if "--tol" in argv:
        i = argv.index("--tol"); tol = float(argv[i + 1]); del argv[i:i + 2]
    if "--adist" in argv:
        i = argv.index("--adist"); adist = argv[i + 1]; del argv[i:i + 2]
    what, specs = argv[0], argv[1:]
    if what == "mamba":
        final = specs[0] == "state"
        for spec in specs[1:]:
            v = [int(x) for x in spec.split(",")]
            d = dict(zip("B T H P N BL".split(), v[:6]))
            q = mamba_run(d, v[6], ADIST[adist], final, (tol, tol))
            print("mamba %s %s A %s seed %d: ref %.3g f32 %.3g |y| %.3g" % (specs[0], d, adist, v[6], *q), flush=True)
        return
    make, run = {"unet": (unet_make, unet_run), "effb2": (effb2_make, effb2_run)}[what]
    for spec in specs:
        v = [int(x) for x in spec.split(",")]
        t = time.time(); x0, P = make(*v)
        y64 = run(x0, P, "f64"); t64 = tol + tol * np.abs(y64)
        q = [float(np.max(np.abs(run(x0, P, m).astype(np.float64) - y64) / t64)) for m in ("ref", "f32")]
        print("%s %s: ref %.3g f32 %.3g |y| %.2g (%.0fs)" % (what, spec, q[0], q[1], np.abs(y64).max(),
                                                             time.time() - t), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

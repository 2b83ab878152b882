// problem: attention/005_sliding_window
// expect: mismatch
// near miss: plain causal, the window forgotten
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, W, 0, 0, 0, 0, 0.0);

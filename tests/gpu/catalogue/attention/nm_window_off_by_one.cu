// problem: attention/005_sliding_window
// expect: mismatch
// near miss: window admits q - k <= W + 1
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL | M_WINDOW)
#define KMOD (0)
#define BUG_WINDOW_OFF_BY_ONE
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, W, 0, 0, 0, 0, 0.0);

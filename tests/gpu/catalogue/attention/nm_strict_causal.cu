// problem: attention/001_causal
// expect: mismatch
// near miss: causal as q > k (the diagonal is not scored; row 0 has no key)
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL)
#define KMOD (0)
#define BUG_STRICT_CAUSAL
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

// problem: attention/004_alibi_causal
// expect: mismatch
// near miss: ALiBi with its sign flipped (slope * (q - k))
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL)
#define KMOD (S_ALIBI)
#define BUG_ALIBI_SIGN
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

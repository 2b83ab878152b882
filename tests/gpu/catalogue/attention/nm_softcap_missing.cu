// problem: attention/007_softcap_causal
// expect: mismatch
// near miss: soft-capping left out
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, 0, 0, 0, 0, 0, softcap);

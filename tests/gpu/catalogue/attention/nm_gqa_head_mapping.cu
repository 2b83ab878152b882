// problem: attention/008_gqa_causal
// expect: mismatch
// near miss: kv head h % HKV instead of h / (HQ / HKV)
#define KT __half
#define KMASK (M_CAUSAL)
#define KMOD (0)
#define BUG_GQA_MOD
// @launch naive_attention<<<dim3(cdiv(S, 8), HQ, B), 256>>>(q, k, v, out, 0, 0, S, D, HQ, HKV, 0, 0, 0, 0, 0, 0.0);

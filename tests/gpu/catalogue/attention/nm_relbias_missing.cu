// problem: attention/003_relative_bias
// expect: mismatch
// near miss: no relative-position bias at all
#define KT __nv_bfloat16
#define KMASK (0)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, bias, 0, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

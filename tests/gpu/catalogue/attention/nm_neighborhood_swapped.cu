// problem: attention/009_neighborhood_2d
// expect: mismatch
// near miss: canvas read column-major (rows and columns swapped)
#define KT __half
#define KMASK (M_NEIGHBOR2D)
#define KMOD (0)
#define BUG_NATTEN_SWAP
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, 0, CH, CW, KH, KW, 0.0);

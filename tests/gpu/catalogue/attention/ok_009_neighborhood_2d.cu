// problem: attention/009_neighborhood_2d
// expect: correct
// correct: the plain float32 kernel with this problem's mask and score mods
#define KT __half
#define KMASK (M_NEIGHBOR2D)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, 0, CH, CW, KH, KW, 0.0);

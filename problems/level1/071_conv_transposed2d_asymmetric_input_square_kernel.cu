// Reference for level1/071_conv_transposed2d_asymmetric_input_square_kernel: transposed convolution, each output element gathering the inputs that reach it (no atomics);
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double. Output padding needs no code: the extra rows simply gather what reaches them.
#include "shared/conv_transpose2d_direct_ref.cuh"
// @launch conv_transpose2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 65536), 256>>>(x, weight, y, B, CI, CO, H, W, OH, OW, K, K, S, S, P, P, 1, 1, G);

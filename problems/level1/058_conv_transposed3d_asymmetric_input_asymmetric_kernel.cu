// Reference for level1/058_conv_transposed3d_asymmetric_input_asymmetric_kernel: transposed convolution, each output element gathering the inputs that reach it (no atomics);
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double. Output padding needs no code: the extra rows simply gather what reaches them.
#include "shared/conv_transpose3d_direct_ref.cuh"
// @launch conv_transpose3d_ref<<<min(cdiv(B*CO*OD*OH*OW, 256), 65536), 256>>>(x, weight, y, B, CI, CO, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, 1, 1, 1, G);

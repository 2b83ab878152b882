// Reference for level1/075_conv_transposed2d_asymmetric_input_asymmetric_kernel_strided_grouped_padded_dilated: transposed convolution, each output element gathering the inputs that reach it (no atomics);
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double.
#include "shared/conv_transpose2d_direct_ref.cuh"
// @launch conv_transpose2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 65536), 256>>>(x, weight, y, B, CI, CO, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DILH, DILW, G);

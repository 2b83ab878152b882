// Reference for level1/054_conv3d_square_input_square_kernel: direct convolution;
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double.
#include "shared/conv3d_direct_ref.cuh"
// @launch conv3d_ref<<<min(cdiv(B*CO*OD*OH*OW, 256), 65536), 256>>>(x, weight, y, B, CI, CO, D, H, W, OD, OH, OW, K, K, K, S, S, S, P, P, P, DIL, DIL, DIL, G);

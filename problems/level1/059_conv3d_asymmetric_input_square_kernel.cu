// Reference for level1/059_conv3d_asymmetric_input_square_kernel: direct convolution;
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double.
#include "shared/conv3d_direct_ref.cuh"
// @launch conv3d_ref<<<min(cdiv(B*CO*OH*OW*OD, 256), 65536), 256>>>(x, weight, y, B, CI, CO, H, W, D, OH, OW, OD, K, K, 1, S, S, S, P, P, P, DIL, DIL, DIL, G);

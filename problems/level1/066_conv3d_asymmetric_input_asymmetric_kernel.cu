// Reference for level1/066_conv3d_asymmetric_input_asymmetric_kernel: direct convolution;
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double.
#include "shared/conv3d_direct_ref.cuh"
// @launch conv3d_ref<<<min(cdiv(B*CO*OD*OH*OW, 256), 65536), 256>>>(x, weight, y, B, CI, CO, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DILD, DILH, DILW, G);

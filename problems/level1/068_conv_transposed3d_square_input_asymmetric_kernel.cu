// Reference for level1/068_conv_transposed3d_square_input_asymmetric_kernel: transposed 3-D
// convolution (no bias), by the kernel of shared/conv_transpose3d_ref.cuh (its header describes the
// method).
#define COB 16      /* output channels per thread (even) */
#include "shared/conv_transpose3d_ref.cuh"
// @launch conv_transpose3d_ref<<<min(B*G*cdiv(CO/G, 16)*SD*SH*SW*cdiv(cdiv(OD, SD)*cdiv(cdiv(OH, SH), 4)*cdiv(OW, SW), 128), 1048576), 128>>>(x, weight, y, B, CI, CO, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, 1, 1, 1, G);

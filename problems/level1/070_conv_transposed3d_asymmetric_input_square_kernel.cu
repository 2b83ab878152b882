// Reference for level1/070_conv_transposed3d_asymmetric_input_square_kernel: transposed 3-D
// convolution (no bias), by the kernel of shared/conv_transpose3d_ref.cuh (its header describes the
// method).
#define COB 12      /* output channels per thread (even) */
#include "shared/conv_transpose3d_ref.cuh"
// @launch conv_transpose3d_ref<<<min(B*G*cdiv(CO/G, 12)*S*S*S*cdiv(cdiv(OD, S)*cdiv(cdiv(OH, S), 4)*cdiv(OW, S), 128), 1048576), 128>>>(x, weight, y, B, CI, CO, D, H, W, OD, OH, OW, K, K, K, S, S, S, P, P, P, DIL, DIL, DIL, G);

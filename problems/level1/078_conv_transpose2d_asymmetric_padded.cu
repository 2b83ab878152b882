// Reference for level1/078_conv_transpose2d_asymmetric_padded: transposed 2-D
// convolution computed per OUTPUT element (a gather: no atomics). Output o receives
// tap k from input i = (o + P - k*DIL) / S when the division is exact and i is in
// range (here S = DIL = 1). Float products summed in double; 64-bit indices.
#include "shared/conv_transpose2d_gather_ref.cuh"
// @launch conv_transpose2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 1048576), 256>>>(x, weight, y, B, CI, H, W, CO, OH, OW, KH, KW, SH, SW, PH, PW, 1, 1);

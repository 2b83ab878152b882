// Reference for level1/084_conv_depthwise2d_asymmetric_input: depthwise 2-D convolution
// (groups = channels: output channel co sees only input channel co / (CO/CI)), no
// bias; one thread per output element in a grid-stride loop with 64-bit indices,
// float products summed in double.
#include "shared/depthwise_conv2d_ref.cuh"
// @launch conv2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 1048576), 256>>>(x, weight, y, B, CI, H, W, CO, OH, OW, K, K, S, S, P, P, 1, 1, CI);

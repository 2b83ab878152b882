"""level2_specs_b: chain specs of KernelBench level 2, problems 038 and 046-072, read by
tools/gen_level2.py beside tools/level2_specs.py (whose problem() and helpers these use).
Facts (ops, order, semantics, default shapes, constants) follow KernelBench's level2/*.py; the
text and code are ours. See level2_specs.py for the spec format. Two additions used here: a
spec's lead may set "blocked" (Conv3d by shared/conv3d_blocked_ref.cuh, ~10x the direct one),
and a spec may have "pre": pools on x before the leading op (038), with lead "in_sp" naming the
pooled spatial dims the leading op reads."""
import level2_specs as base
from gen_level2 import Ew, Norm, Pool, Reduce, Save, Softmax  # noqa: F401
from level2_specs import C2, GAMMA, BETA, N01, TRAIN_BN, affine, bias_in, gn, problem, torch_text  # noqa: F401

_N0 = len(base.SPECS)  # problem() appends to level2_specs.SPECS; ours are the ones added below


def tol(atol, rtol, why):
    return {"atol": atol, "rtol": rtol, "why": why}


def last():
    return base.SPECS[-1]


# torch.ones parameters: 1 in the first check; the checks that vary constants draw them N(1, 0.5)
ONES = {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}
CONV3D_SMALL = {"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10}
CONV3D_ALT = [{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}]

# ---------------------------------------------------------------- problem 38

problem(38, "conv_transpose3d_avg_pool_clamp_softmax_multiply", "AvgPool3d, ConvTranspose3d, clamp, softmax over the spatial dims, multiply", "convT3d",
        dict(B=32, CI=32, CO=64, D=32, H=64, W=64, K=3, S=2, P=1, OP=1),
        [Ew("l2_clamp(v, clamp_min, clamp_max)", "clamp to [clamp_min, clamp_max]"),
         Softmax(2, 5, "softmax over the flattened spatial dims OD*OH*OW of each (b, c) (KernelBench's view(b, c, -1), softmax(dim=2), view back)"),
         Ew("v * {scale}", "multiply by scale (1, CO, 1, 1, 1)")],
        ["x = torch.clamp(x, min=d['clamp_min'], max=d['clamp_max'])",
         "x = torch.softmax(x.flatten(2), dim=2).view_as(x)", "x = x * scale"],
        ["B", "CO", "OD", "OH", "OW"],
        extra_inputs=[bias_in("scale", [1, "CO", 1, 1, 1], ONES)], params=[("clamp_min", 0.0), ("clamp_max", 1.0)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 5},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 4, "H": 9, "W": 17}],
        tol=tol(1e-9, 1e-4, "each (b, c) softmax spreads over OD*OH*OW = 131072 positions, so outputs are ~7.6e-6 and differ from 1/131072 by a few percent (the clamped conv outputs lie in [0, ~0.2]): atol must sit far below them or an all-zero output passes (it would at KernelBench's 1e-4); float32 math errs by ~1e-6 relative, inside 1e-4 relative, while a skipped clamp, a skipped bias or a softmax over the wrong dims fail"),
        notes="KernelBench applies the AvgPool3d to the input BEFORE the transposed convolution; scale is torch.ones in KernelBench (a constant 1 here, so multiplying by it is exact).")
s = last()
s["pre"] = [Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2) on x")]
s["lead"]["in_sp"] = ["PD", "PH", "PW"]
s["derived"] = {"PD": "D/2", "PH": "H/2", "PW": "W/2", "OD": "(D/2 - 1)*S - 2*P + K + OP",
                "OH": "(H/2 - 1)*S - 2*P + K + OP", "OW": "(W/2 - 1)*S - 2*P + K + OP"}
s["torch"] = torch_text(s["inputs"], ["x = F.avg_pool3d(x, kernel_size=2)",
                                      "x = F.conv_transpose3d(x, weight, bias, stride=d['S'], padding=d['P'], output_padding=d['OP'])",
                                      "x = torch.clamp(x, min=d['clamp_min'], max=d['clamp_max'])",
                                      "x = torch.softmax(x.flatten(2), dim=2).view_as(x)", "x = x * scale"])
for a, b in (("First 3-D transposed", "First AvgPool3d(kernel 2, stride 2, floor) on x, giving (B, CI, PD, PH, PW) with PD = D/2, PH = H/2, PW = W/2; then a 3-D transposed"),
             ("OD = (D - 1)*S", "OD = (PD - 1)*S")):
    assert s["description"].count(a) == 1, a
    s["description"] = s["description"].replace(a, b, 1)
s["flops"] = "2*B*CI*CO*(D/2)*(H/2)*(W/2)*K*K*K + B*CI*D*H*W"

# ---------------------------------------------------------------- problems 46-57

problem(46, "conv2d_subtract_tanh_subtract_avg_pool", "Conv2d, subtract, tanh, subtract, AvgPool2d", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("v - subtract1_value", "subtract subtract1_value"), Ew("tanh(v)", "tanh"), Ew("v - subtract2_value", "subtract subtract2_value"),
         Pool("avg", ["2", "2"], ["2", "2"], "AvgPool2d(kernel 2, stride 2)")],
        ["x = x - d['subtract1_value']", "x = torch.tanh(x)", "x = x - d['subtract2_value']", "x = F.avg_pool2d(x, kernel_size=2)"],
        ["B", "CO", "OH/2", "OW/2"], params=[("subtract1_value", 0.5), ("subtract2_value", 0.2)],
        tol=tol(1e-4, 1e-4, "outputs are means of 4 tanh values minus 0.2, O(0.5); float32 math errs by ~1e-7, well inside 1e-4; a skipped subtraction (0.2 or a 0.5 shift before the tanh), a max in place of the mean and a skipped pool fail"))

problem(47, "conv3d_mish_tanh", "Conv3d, Mish, tanh", "conv3d",
        dict(B=16, CI=32, CO=64, D=32, H=64, W=64, K=3, **C2),
        [Ew("l2_mish(v)", "Mish (x * tanh(softplus(x)))"), Ew("tanh(v)", "tanh")],
        ["x = F.mish(x)", "x = torch.tanh(x)"], ["B", "CO", "OD", "OH", "OW"],
        small=CONV3D_SMALL, alt=CONV3D_ALT)
last()["lead"]["blocked"] = True

problem(48, "conv3d_scaling_tanh_multiply_sigmoid", "Conv3d, multiply by a per-channel scale, tanh, multiply by a per-channel bias, sigmoid", "conv3d",
        dict(B=128, CI=3, CO=16, D=16, H=64, W=64, K=3, **C2),
        [Ew("v * {scaling_factor}", "multiply by scaling_factor (CO, 1, 1, 1)"), Ew("tanh(v)", "tanh"),
         Ew("v * {extra_bias}", "multiply by extra_bias (CO, 1, 1, 1)"), Ew("l2_sigmoid(v)", "sigmoid")],
        ["x = x * scaling_factor", "x = torch.tanh(x)", "x = x * extra_bias", "x = torch.sigmoid(x)"], ["B", "CO", "OD", "OH", "OW"],
        extra_inputs=[bias_in("scaling_factor", ["CO", 1, 1, 1]), bias_in("extra_bias", ["CO", 1, 1, 1])],
        small=CONV3D_SMALL, alt=CONV3D_ALT,
        notes="scaling_factor and extra_bias are KernelBench's torch.randn parameters of shape (CO, 1, 1, 1) (its scalar scaling_factor argument is unused).")
last()["lead"]["blocked"] = True

problem(49, "conv_transpose3d_softmax_sigmoid", "ConvTranspose3d, softmax over channels, sigmoid", "convT3d",
        dict(B=16, CI=32, CO=64, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Softmax(1, 2, "softmax over the channel dim"), Ew("l2_sigmoid(v)", "sigmoid")],
        ["x = torch.softmax(x, dim=1)", "x = torch.sigmoid(x)"], ["B", "CO", "OD", "OH", "OW"],
        tol=tol(1e-5, 1e-5, "softmax outputs are ~1/CO = 0.016, so the sigmoid outputs are 0.5039 with a spread of ~6e-4 that carries all the information: at KernelBench's 1e-4 a kernel 25% wrong in that spread passes; float32 math errs by ~1e-7, inside 2e-5, while a constant sigmoid(1/CO), a softmax over the wrong dim or a skipped bias fail"))

problem(50, "conv_transpose3d_scaling_avg_pool_bias_add_scaling", "ConvTranspose3d, scale, AvgPool3d, bias add, scale", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Ew("v * scale1", "multiply by scale1"), Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2)"),
         Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)"), Ew("v * scale2", "multiply by scale2")],
        ["x = x * d['scale1']", "x = F.avg_pool3d(x, kernel_size=2)", "x = x + extra_bias", "x = x * d['scale2']"],
        ["B", "CO", "OD/2", "OH/2", "OW/2"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])], params=[("scale1", 0.5), ("scale2", 1.0)],
        tol=tol(1e-5, 1e-4, "outputs are extra_bias (N(0, 1)) plus half a mean of 8 transposed-convolution outputs (~0.02 with CI = 3 and PyTorch's init); float32 math errs by ~1e-8 absolute; 1e-5 absolute keeps a kernel that drops the convolution part (bias only), skips the pool or the scale failing"),
        notes="scale1 and scale2 are scalar nn.Parameters in KernelBench (torch.tensor(0.5), torch.tensor(1.0)): params here. KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(51, "gemm_subtract_global_avg_pool_log_sum_exp_gelu_residual_add", "Linear, subtract, row mean, logsumexp, GELU, add the input", "linear",
        dict(B=2048, IN=8192, OUT=8192),
        [Ew("v - {subtract}", "subtract the parameter subtract (OUT)"),
         Reduce(1, 2, "mean", True, "mean over OUT, keepdim (B, 1)"),
         Ew("v", "logsumexp over dim 1 (size 1: the identity)"), Ew("l2_gelu(v)", "GELU (erf form)"),
         Ew("v + {x}", "add the ORIGINAL input x (B, IN), broadcasting the (B, 1) column: output (B, IN)", out_shape=["B", "IN"])],
        ["x = x - subtract", "x = torch.mean(x, dim=1, keepdim=True)", "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = F.gelu(x)", "x = x + x0"],
        ["B", "IN"], extra_inputs=[bias_in("subtract", ["OUT"])],
        tol=tol(1e-4, 1e-4, "outputs are x + GELU(m) with m the row mean of the Linear output minus subtract (|m| ~ 0.01, GELU(m) ~ 0.005 beside |x| ~ 1): the added term is ~25 times the tolerance, so copying x through fails (KernelBench's rand inputs and 1e-2 let it pass); float32 math errs by ~1e-7, a skipped subtract or a sum in place of the mean fail"),
        notes="The residual is the input x itself (KernelBench clones it before the Linear), so the output has x's shape (B, IN); IN = OUT in KernelBench, any IN here.")
last()["torch"] = last()["torch"].replace("        d = self.d\n", "        d = self.d\n        x0 = x.clone()\n", 1)

problem(52, "conv2d_activation_batch_norm", "Conv2d, x * tanh(softplus(x)), BatchNorm2d (training)", "conv2d",
        dict(B=64, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("v * tanh(l2_softplus(v))", "multiply tanh(softplus(x)) by x (Mish)"),
         Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm2d in training mode (batch statistics over B, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)")],
        ["x = torch.tanh(F.softplus(x)) * x", "x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])"],
        ["B", "CO", "OH", "OW"], extra_inputs=affine("bn", "CO"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(53, "gemm_scaling_hardtanh_gelu", "Linear, scale, Hardtanh, GELU", "linear",
        dict(B=2048, IN=8192, OUT=8192),
        [Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("l2_clamp(v, hardtanh_min, hardtanh_max)", "Hardtanh(hardtanh_min, hardtanh_max)"),
         Ew("l2_gelu(v)", "GELU (erf form)")],
        ["x = x * d['scaling_factor']", "x = F.hardtanh(x, min_val=d['hardtanh_min'], max_val=d['hardtanh_max'])", "x = F.gelu(x)"],
        ["B", "OUT"], params=[("scaling_factor", 0.5), ("hardtanh_min", -2.0), ("hardtanh_max", 2.0)],
        notes="At PyTorch's init the scaled Linear outputs have std ~0.29, so the Hardtanh(-2, 2) almost never clips (as in KernelBench).")

problem(54, "conv2d_multiply_leaky_relu_gelu", "Conv2d, multiply by a per-channel parameter, LeakyReLU, GELU", "conv2d",
        dict(B=64, CI=64, CO=64, H=256, W=256, K=3, **C2),
        [Ew("v * {multiplier}", "multiply by multiplier (CO, 1, 1)"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01)"), Ew("l2_gelu(v)", "GELU (erf form)")],
        ["x = x * multiplier", "x = F.leaky_relu(x, negative_slope=0.01)", "x = F.gelu(x)"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("multiplier", ["CO", 1, 1])])

problem(55, "matmul_max_pool_sum_scale", "Linear, MaxPool1d over the features, row sum, scale", "linear",
        dict(B=128, IN=32768, OUT=32768),
        [Pool("max", ["2"], ["2"], "MaxPool1d(kernel 2, stride 2) over the OUT features (KernelBench unsqueezes a channel dim of 1 and squeezes it back): (B, OUT/2)"),
         Reduce(1, 2, "sum", False, "sum over the OUT/2 pooled features: (B)"), Ew("v * scale_factor", "multiply by scale_factor")],
        ["x = F.max_pool1d(x.unsqueeze(1), kernel_size=2).squeeze(1)", "x = torch.sum(x, dim=1)", "x = x * d['scale_factor']"],
        ["B"], params=[("scale_factor", 0.5)],
        tol=tol(1e-4, 1e-4, "outputs are half the sum of OUT/2 = 16384 pair maxima, ~2700 with a spread of ~30 across rows; float32 sums of 16384 values err by ~1e-3 absolute, inside 1e-4 relative (~0.27); a constant, a mean in place of the max, a missing pool and a sum over the wrong dim fail"))

problem(56, "matmul_sigmoid_sum", "Linear, sigmoid, row sum", "linear",
        dict(B=128, IN=32768, OUT=32768),
        [Ew("l2_sigmoid(v)", "sigmoid"), Reduce(1, 2, "sum", True, "sum over OUT, keepdim (B, 1)")],
        ["x = torch.sigmoid(x)", "x = torch.sum(x, dim=1, keepdim=True)"], ["B", 1],
        tol=tol(1e-4, 1e-4, "outputs are sums of OUT = 32768 sigmoids, ~16384 with a spread of ~25 across rows; float32 sums err by ~1e-3 absolute, inside 1e-4 relative (~1.6); a constant OUT/2, a skipped bias and a sum over the wrong dim fail"))

problem(57, "conv2d_relu_hard_swish", "Conv2d, ReLU, x * clamp((x + 3)/6, 0, 1)", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, **C2),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("v * l2_clamp((v + 3.0) / 6.0, 0.0, 1.0)", "x * clamp((x + 3)/6, 0, 1) (hardswish written out)")],
        ["x = torch.relu(x)", "x = x * torch.clamp((x + 3) / 6, 0, 1)"], ["B", "CO", "OH", "OW"])

# ---------------------------------------------------------------- problems 58-72

problem(58, "conv_transpose3d_log_sum_exp_hard_swish_subtract_clamp", "ConvTranspose3d, logsumexp over channels, x * sigmoid(x + 3)/6, subtract, clamp", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Reduce(1, 2, "lse", True, "logsumexp over the channel dim, keepdim (B, 1, OD, OH, OW)"),
         Ew("v * l2_sigmoid(v + 3.0) / 6.0", "x * sigmoid(x + 3) / 6 (KernelBench's own formula, not hardswish)"),
         Ew("v - {extra_bias}", "subtract extra_bias (1, 1, 1, 1), a scalar"), Ew("l2_clamp(v, -1.0, 1.0)", "clamp to [-1, 1]")],
        ["x = torch.logsumexp(x, dim=1, keepdim=True)", "x = x * torch.sigmoid(x + 3) / 6", "x = x - extra_bias", "x = torch.clamp(x, min=-1, max=1)"],
        ["B", 1, "OD", "OH", "OW"], extra_inputs=[bias_in("extra_bias", [1, 1, 1, 1])],
        tol=tol(1e-4, 1e-4, "before the clamp, outputs are ~0.46 - extra_bias with a spread of ~3e-3 (the logsumexp of 16 small convolution outputs is ~log(16) + 0.01); float32 math errs by ~1e-7, well inside 1e-4, while a constant, a max in place of the logsumexp and a real hardswish (x * relu6(x + 3)/6: 2.66 instead of 0.46) fail"),
        notes="extra_bias is KernelBench's torch.randn(1, 1, 1, 1): N(0, 1). When |0.46 - extra_bias| > 1 (about 37% of draws) every output is clamped to the same +-1; the verifier's several seeds keep a constant kernel failing. KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(59, "matmul_swish_scaling", "Linear, swish, scale", "linear",
        dict(B=128, IN=32768, OUT=32768),
        [Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = x * torch.sigmoid(x)", "x = x * d['scaling_factor']"], ["B", "OUT"], params=[("scaling_factor", 2.0)])

problem(60, "conv_transpose3d_swish_group_norm_hard_swish", "ConvTranspose3d, swish, GroupNorm, hardswish", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=0, NG=4),
        [Ew("l2_sigmoid(v) * v", "swish (sigmoid(x) * x)"), gn("gn", "NG"), Ew("l2_hardswish(v)", "hardswish")],
        ["x = torch.sigmoid(x) * x", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = F.hardswish(x)"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        alt=[{"B": 3, "CI": 5, "CO": 12, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 3, "H": 9, "W": 17}],
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(61, "conv_transpose3d_relu_group_norm", "ConvTranspose3d (no bias), ReLU, GroupNorm", "convT3d",
        dict(B=16, CI=64, CO=128, D=32, H=32, W=32, K=3, S=1, P=0, OP=0, NG=8),
        [Ew("fmax(v, 0.0)", "ReLU"), gn("gn", "NG")],
        ["x = torch.relu(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)], bias=False,
        small={"B": 2, "CI": 3, "CO": 16, "D": 3, "H": 4, "W": 5},
        alt=[{"B": 3, "CI": 5, "CO": 24, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 32, "D": 3, "H": 9, "W": 17}],
        notes="KernelBench's ConvTranspose3d here has bias=False, stride 1 and no padding.")
last()["description"] = last()["description"].replace("output padding OP, with bias;", "output padding OP, NO bias;", 1)

problem(62, "matmul_group_norm_leaky_relu_sum", "Linear, GroupNorm, LeakyReLU, x + x", "linear",
        dict(B=1024, IN=8192, OUT=8192, NG=512),
        [Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG"),
         Ew("l2_leaky(v, negative_slope)", "LeakyReLU(negative_slope)"), Ew("v + v", "add the result to itself")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = F.leaky_relu(x, negative_slope=d['negative_slope'])", "x = x + x"],
        ["B", "OUT"], extra_inputs=affine("gn", "OUT"), params=[("eps", 1e-5), ("negative_slope", 0.01)],
        small={"B": 4, "IN": 40, "OUT": 64, "NG": 4},
        alt=[{"B": 5, "IN": 257, "OUT": 160, "NG": 10}, {"B": 33, "IN": 1024, "OUT": 1000, "NG": 125}],
        notes="Groups hold OUT/NG = 16 features at the default dims (8 in one alt set).")

problem(63, "gemm_relu_divide", "Linear, ReLU, divide", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("v / divisor", "divide by divisor")],
        ["x = torch.relu(x)", "x = x / d['divisor']"], ["B", "OUT"], params=[("divisor", 2.0)])

problem(64, "gemm_log_sum_exp_leaky_relu_leaky_relu_gelu_gelu", "Linear, logsumexp, LeakyReLU twice, GELU twice", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Reduce(1, 2, "lse", True, "logsumexp over OUT, keepdim (B, 1)"),
         Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01)"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01) again"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("l2_gelu(v)", "GELU again")],
        ["x = torch.logsumexp(x, dim=1, keepdim=True)", "x = F.leaky_relu(x, negative_slope=0.01)", "x = F.leaky_relu(x, negative_slope=0.01)",
         "x = F.gelu(x)", "x = F.gelu(x)"], ["B", 1],
        tol=tol(1e-5, 1e-5, "outputs are the row logsumexp of the Linear outputs, ~log(OUT) + 0.17 = 9.18 with a spread of ~0.007 across rows (the LeakyReLUs and GELUs are the identity at that size, as in KernelBench); float32 math errs by ~1e-6, inside 1e-5 + 1e-5 relative (~1e-4), while a constant log(OUT) + 0.17, a max in place of the logsumexp and a skipped bias fail"),
        notes="At PyTorch's init the logsumexp is ~9.2 > 0, where LeakyReLU and GELU are (numerically) the identity.")

problem(65, "conv2d_avg_pool_sigmoid_sum", "Conv2d, AvgPool2d, sigmoid, sum over channels and space", "conv2d",
        dict(B=128, CI=8, CO=64, H=384, W=384, K=3, **C2),
        [Pool("avg", ["4", "4"], ["4", "4"], "AvgPool2d(kernel 4, stride 4)"), Ew("l2_sigmoid(v)", "sigmoid"),
         Reduce(1, 4, "sum", False, "sum over (CO, OH/4, OW/4): one value per batch element")],
        ["x = F.avg_pool2d(x, kernel_size=4)", "x = torch.sigmoid(x)", "x = torch.sum(x, dim=[1, 2, 3])"], ["B"],
        alt=[{"B": 3, "CI": 5, "CO": 7, "H": 33, "W": 17}, {"B": 1, "CI": 16, "CO": 32, "H": 67, "W": 131}],
        tol=tol(1e-3, 1e-5, "each output sums CO*(OH/4)*(OW/4) = 577600 sigmoids, ~2.9e5 with a spread of ~27 across the batch: KernelBench's 1e-4 relative (~29) would accept a kernel that knows only the expected value; float32 sums in blocks or pairwise err by ~0.03 (1e-7 relative), inside 1e-5 relative (~2.9), but one float32 accumulator over all 577600 terms errs by ~10 and fails (reduce in blocks, or in double); a skipped pool or bias fails"))

problem(66, "matmul_dropout_softmax", "Linear, dropout (mask as an input), softmax", "linear",
        dict(B=128, IN=16384, OUT=16384),
        [Ew("v * {dropout_mask}", "dropout: multiply by dropout_mask (B, OUT), 0 with probability dropout_p, else 1/(1 - dropout_p)"),
         Softmax(1, 2, "softmax over OUT")],
        ["x = x * dropout_mask", "x = torch.softmax(x, dim=1)"], ["B", "OUT"],
        extra_inputs=[{"name": "dropout_mask", "dtype": "f32", "shape": ["B", "OUT"], "init": {"dist": "bernoulli", "p": 0.2}}],
        params=[("dropout_p", 0.2)],
        tol=tol(1e-9, 1e-4, "softmax over OUT = 16384 features: outputs are ~6e-5 (from ~3e-6 to ~1e-3), so an absolute tolerance like KernelBench's 1e-4 (or 1e-2) accepts an all-zero output; atol 1e-9 with 1e-4 relative still passes float32 softmaxes (~1e-6 relative) and fails a skipped mask, a mask without the 1/(1 - p) scale and a softmax over the wrong dim"),
        notes="KernelBench draws the dropout mask inside the model (training mode), differently for the model and the reference; here the mask is the input dropout_mask so the problem is deterministic; dropout_p is stated for the record, the mask already holds it.")

problem(67, "conv2d_gelu_global_avg_pool", "Conv2d, GELU, global average pool", "conv2d",
        dict(B=128, CI=8, CO=64, H=256, W=256, K=3, **C2),
        [Ew("l2_gelu(v)", "GELU (erf form)"), Reduce(2, 4, "mean", False, "global average pool over (OH, OW), squeezed: (B, CO)")],
        ["x = F.gelu(x)", "x = F.adaptive_avg_pool2d(x, 1)", "x = x.squeeze(-1).squeeze(-1)"], ["B", "CO"],
        tol=tol(1e-5, 1e-4, "outputs are spatial means of GELU, ~0.06-0.17 per channel (set by its bias) with a spread of ~3e-3 across the batch; float32 means of 64516 values err by ~1e-7; 1e-5 absolute keeps a kernel that knows only each channel's expected value, a skipped bias and a max in place of the mean failing"))

problem(68, "matmul_min_subtract", "Linear, min with a constant, subtract the constant", "linear",
        dict(B=128, IN=16384, OUT=16384),
        [Ew("fmin(v, constant)", "min(x, constant) elementwise"), Ew("v - constant", "subtract constant")],
        ["x = torch.clamp(x, max=d['constant'])", "x = x - d['constant']"], ["B", "OUT"], params=[("constant", 2.0)],
        notes="constant is a scalar nn.Parameter in KernelBench (torch.tensor(2.0)): a param here. At PyTorch's init the Linear outputs have std ~0.58, so the min clips only ~0.03% of them (as in KernelBench).")

problem(69, "conv2d_hard_swish_relu", "Conv2d, hardswish, ReLU", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, **C2),
        [Ew("l2_hardswish(v)", "hardswish"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = F.hardswish(x)", "x = torch.relu(x)"], ["B", "CO", "OH", "OW"])

problem(70, "gemm_sigmoid_scaling_residual_add", "Linear, sigmoid, scale, residual add", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Save("orig"), Ew("l2_sigmoid(v)", "sigmoid"), Ew("v * scaling_factor", "multiply by scaling_factor"),
         Ew("v + {orig}", "add the Linear output (orig)")],
        ["orig = x", "x = torch.sigmoid(x)", "x = x * d['scaling_factor']", "x = x + orig"], ["B", "OUT"], params=[("scaling_factor", 2.0)])

problem(71, "conv2d_divide_leaky_relu", "Conv2d, divide, LeakyReLU", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, **C2),
        [Ew("v / divisor", "divide by divisor"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01)")],
        ["x = x / d['divisor']", "x = F.leaky_relu(x, negative_slope=0.01)"], ["B", "CO", "OH", "OW"], params=[("divisor", 2.0)])

problem(72, "conv_transpose3d_batch_norm_avg_pool_avg_pool", "ConvTranspose3d, BatchNorm3d (training), two AvgPool3d", "convT3d",
        dict(B=64, CI=3, CO=16, D=32, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm3d in training mode (batch statistics over B, OD, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2)"),
         Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2) again")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])",
         "x = F.avg_pool3d(x, kernel_size=2)", "x = F.avg_pool3d(x, kernel_size=2)"],
        ["B", "CO", "OD/2/2", "OH/2/2", "OW/2/2"], extra_inputs=affine("bn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 5},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 4, "H": 9, "W": 17}],
        tol=tol(1e-4, 1e-4, "outputs are means of 64 neighbouring batch-normalised values, bn_bias plus a few tenths of bn_weight; float32 statistics over B*OD*OH*OW = 16M values per channel err by ~1e-6 relative when reduced in blocks, inside 1e-4; eval-mode statistics, a skipped affine and a skipped pool fail"),
        notes=TRAIN_BN + " The ConvTranspose3d bias cancels in the BatchNorm (a kernel may drop it). KernelBench's ConvTranspose3d here has no output padding (OP = 0); its unused bias_shape argument creates nothing.")

SPECS = base.SPECS[_N0:]

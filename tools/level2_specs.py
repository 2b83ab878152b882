"""level2_specs: the chain specs of KernelBench level 2, one per problem, read by
tools/gen_level2.py. Facts (ops, order, semantics, default shapes, constants) follow
KernelBench's level2/*.py; the text and code are ours. Each spec: the leading op with its
default dims, the chain (ops of gen_level2: Ew, Reduce, Softmax, Norm, Pool, Save, Reshape,
Linear2), extra inputs and params, the output shape, and `torch`: forward lines written by hand
(the independent transcription tools/crosscheck.py runs in float64)."""
from gen_level2 import Ew, Linear2, Norm, Pool, Reduce, Reshape, Save, Softmax  # noqa: F401

SPECS = []

N01 = {"dist": "normal", "mean": 0, "std": 1}
GAMMA = {"dist": "normal", "mean": 1, "std": 0.5}  # norm weights: ones in PyTorch; varied here
BETA = {"dist": "normal", "mean": 0, "std": 0.5}   # norm biases: zeros in PyTorch; varied here

# dims sets per leading op (hyper-parameters are added from the default set)
SMALL = {
    "linear": {"B": 4, "IN": 40, "OUT": 24},
    "conv2d": {"B": 2, "CI": 3, "CO": 8, "H": 10, "W": 12},
    "conv3d": {"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
    "convT2d": {"B": 2, "CI": 3, "CO": 8, "H": 5, "W": 6},
    "convT3d": {"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 5},
}
ALT = {
    "linear": [{"B": 5, "IN": 257, "OUT": 131}, {"B": 33, "IN": 1024, "OUT": 1000}],
    "conv2d": [{"B": 3, "CI": 5, "CO": 7, "H": 33, "W": 17}, {"B": 1, "CI": 16, "CO": 32, "H": 67, "W": 131}],
    "conv3d": [{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
    "convT2d": [{"B": 3, "CI": 5, "CO": 7, "H": 17, "W": 9}, {"B": 1, "CI": 16, "CO": 32, "H": 33, "W": 65}],
    "convT3d": [{"B": 3, "CI": 5, "CO": 7, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 3, "H": 9, "W": 17}],
}
LEAD_PHRASE = {
    "linear": "y = x @ weight^T + bias (torch.nn.Linear; x (B, IN), weight (OUT, IN), bias (OUT))",
    "conv2d": "2-D convolution as torch.nn.Conv2d (cross-correlation, stride S, zero padding P, with bias; weight (CO, CI, K, K)), output (B, CO, OH, OW), OH = (H + 2*P - K)/S + 1, OW likewise",
    "conv3d": "3-D convolution as torch.nn.Conv3d (cross-correlation, stride S, zero padding P, with bias; weight (CO, CI, K, K, K)), output (B, CO, OD, OH, OW), OD = (D + 2*P - K)/S + 1, OH and OW likewise",
    "convT2d": "2-D transposed convolution as torch.nn.ConvTranspose2d (stride S, padding P, output padding OP, with bias; weight (CI, CO, K, K)), output (B, CO, OH, OW), OH = (H - 1)*S - 2*P + K + OP, OW likewise",
    "convT3d": "3-D transposed convolution as torch.nn.ConvTranspose3d (stride S, padding P, output padding OP, with bias; weight (CI, CO, K, K, K)), output (B, CO, OD, OH, OW), OD = (D - 1)*S - 2*P + K + OP, OH and OW likewise",
}


def lead_setup(kind, bias=True, w_init=None):
    """Inputs, derived dims, output shape and torch line of the leading op."""
    if kind == "linear":
        ins = [{"name": "x", "dtype": "f32", "shape": ["B", "IN"], "init": N01},
               {"name": "weight", "dtype": "f32", "shape": ["OUT", "IN"], "init": w_init or {"dist": "uniform_fan_in", "fan_in": "IN"}}]
        if bias:
            ins.append({"name": "bias", "dtype": "f32", "shape": ["OUT"], "init": {"dist": "uniform_fan_in", "fan_in": "IN"}})
        return ins, {}, ["B", "OUT"], "x = F.linear(x, weight, %s)" % ("bias" if bias else "None"), "2*B*IN*OUT"
    nd = 3 if kind.endswith("3d") else 2
    sp = ["D", "H", "W"][3 - nd:]
    osp = ["O" + s for s in sp]
    xin = {"name": "x", "dtype": "f32", "shape": ["B", "CI"] + sp, "init": N01}
    if kind.startswith("convT"):
        fan = "CO*" + "*".join(["K"] * nd)
        w = {"name": "weight", "dtype": "f32", "shape": ["CI", "CO"] + ["K"] * nd, "init": {"dist": "uniform_fan_in", "fan_in": fan}}
        derived = {o: "(%s - 1)*S - 2*P + K + OP" % s for s, o in zip(sp, osp)}
        line = "x = F.conv_transpose%dd(x, weight, %s, stride=d['S'], padding=d['P'], output_padding=d['OP'])" % (nd, "bias" if bias else "None")
        flops = "2*B*CI*CO*%s*%s" % ("*".join(sp), "*".join(["K"] * nd))
    else:
        fan = "CI*" + "*".join(["K"] * nd)
        w = {"name": "weight", "dtype": "f32", "shape": ["CO", "CI"] + ["K"] * nd, "init": {"dist": "uniform_fan_in", "fan_in": fan}}
        derived = {o: "(%s + 2*P - K)/S + 1" % s for s, o in zip(sp, osp)}
        line = "x = F.conv%dd(x, weight, %s, stride=d['S'], padding=d['P'])" % (nd, "bias" if bias else "None")
        flops = "2*B*CO*%s*CI*%s" % ("*".join(osp), "*".join(["K"] * nd))
    ins = [xin, w]
    if bias:
        ins.append({"name": "bias", "dtype": "f32", "shape": ["CO"], "init": {"dist": "uniform_fan_in", "fan_in": fan}})
    return ins, derived, ["B", "CO"] + osp, line, flops


def torch_text(inputs, lines):
    args = ", ".join(t["name"] for t in inputs)
    body = "\n".join("        " + l for l in lines)
    return ("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            "class Model(nn.Module):\n    def __init__(self, **kwargs):\n        super().__init__()\n"
            "        self.d = kwargs  # dims and params by name\n\n"
            "    def forward(self, %s):\n        d = self.d\n%s\n        return x\n" % (args, body))


def problem(pid, name, title, kind, default, chain, torch, out_shape, extra_inputs=(), params=(),
            small=None, alt=None, bias=True, w_init=None, tol=None, notes="", degenerate=None,
            extra_derived=None, epi_flops="0"):
    """Adds a spec. default: KernelBench's dims (hyper-parameters included); small/alt: overrides
    of the size dims (hyper-parameters are copied from default unless given)."""
    inputs, derived, lead_out, lead_line, flops = lead_setup(kind, bias, w_init)
    if extra_derived:
        derived.update(extra_derived)
    hyper = {k: v for k, v in default.items() if k not in SMALL[kind]}
    sm = dict(hyper, **(small if small is not None else SMALL[kind]))
    alts = [dict(hyper, **a) for a in (alt if alt is not None else ALT[kind])]
    inputs += list(extra_inputs)
    ps = [{"name": n, "dtype": "f64", "value": v} for n, v in params]
    lead = {"kind": kind, "out_shape": lead_out, "bias": "bias" if bias else None}
    if kind == "linear":
        lead.update(M="B", K="IN", N="OUT", w="weight")
    steps = [op.phrase for op in chain if getattr(op, "phrase", None)]
    descr_inputs = []
    for t in inputs:
        init = t["init"]
        how = {"normal": "N(%g, %g)" % (init.get("mean", 0), init.get("std", 1)),
               "uniform_fan_in": "PyTorch's default init, uniform(-1/sqrt(%s), 1/sqrt(%s))" % (init.get("fan_in"), init.get("fan_in")),
               "constant": "all %g" % init.get("value", 0),
               "bernoulli": "a dropout mask: 0 with probability %g, else 1/(1-%g)" % (init.get("p", 0), init.get("p", 0))}.get(init["dist"], init["dist"])
        descr_inputs.append("%s (%s) ~ %s" % (t["name"], ", ".join(str(s) for s in t["shape"]), how))
    desc = ("KernelBench level 2, problem %d. float32 throughout. First %s. Then, in order: %s. "
            "Module parameters are inputs: %s. %s Output: y of shape (%s), float32."
            % (pid, LEAD_PHRASE[kind], "; ".join(steps), "; ".join(descr_inputs), notes,
               ", ".join(str(s) for s in out_shape)))
    if params:
        desc += " Params: %s." % ", ".join("%s = %g" % (n, v) for n, v in params)
    numel_out = "*".join(str(s) for s in out_shape)
    in_bytes = " + ".join("*".join(str(s) for s in t["shape"]) for t in inputs)
    tolerance = tol or {"atol": 1e-4, "rtol": 1e-4,
                        "why": "KernelBench's float32 tolerance. The leading op's outputs are O(0.5) "
                               "at PyTorch's init and N(0, 1) inputs; float32 accumulation in any order "
                               "errs by ~1e-6 and the epilogue's float32 math by a few ulps, well inside "
                               "1e-4, while TF32 or half-precision products (~3e-4 typical) and a "
                               "skipped or reordered epilogue step fail"}
    SPECS.append({
        "id": pid, "name": name, "title": title, "kb_name": KB_NAMES[pid - 1],
        "lead": lead, "chain": chain,
        "inputs": inputs,
        "outputs": [{"name": "y", "dtype": "f32", "shape": list(out_shape)}],
        "params": ps,
        "dims": {"default": default, "small": sm, "alt": alts},
        "derived": derived,
        "description": desc,
        "torch": torch_text(inputs, [lead_line] + list(torch)),
        "tolerance": tolerance,
        "bytes": "4*(%s + %s)" % (in_bytes, numel_out),
        "flops": "%s + %s" % (flops, epi_flops),
        "degenerate": degenerate,
    })


KB_NAMES = ['1_Conv2D_ReLU_BiasAdd', '2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide', '3_ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU', '4_Conv2d_Mish_Mish', '5_ConvTranspose2d_Subtract_Tanh', '6_Conv3d_Softmax_MaxPool_MaxPool', '7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd', '8_Conv3d_Divide_Max_GlobalAvgPool_BiasAdd_Sum', '9_Matmul_Subtract_Multiply_ReLU', '10_ConvTranspose2d_MaxPool_Hardtanh_Mean_Tanh', '11_ConvTranspose2d_BatchNorm_Tanh_MaxPool_GroupNorm', '12_Gemm_Multiply_LeakyReLU', '13_ConvTranspose3d_Mean_Add_Softmax_Tanh_Scaling', '14_Gemm_Divide_Sum_Scaling', '15_ConvTranspose3d_BatchNorm_Subtract', '16_ConvTranspose2d_Mish_Add_Hardtanh_Scaling', '17_Conv2d_InstanceNorm_Divide', '18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp', '19_ConvTranspose2d_GELU_GroupNorm', '20_ConvTranspose3d_Sum_ResidualAdd_Multiply_ResidualAdd', '21_Conv2d_Add_Scale_Sigmoid_GroupNorm', '22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish', '23_Conv3d_GroupNorm_Mean', '24_Conv3d_Min_Softmax', '25_Conv2d_Min_Tanh_Tanh', '26_ConvTranspose3d_Add_HardSwish', '27_Conv3d_HardSwish_GroupNorm_Mean', '28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply', '29_Matmul_Mish_Mish', '30_Gemm_GroupNorm_Hardtanh', '31_Conv2d_Min_Add_Multiply', '32_Conv2d_Scaling_Min', '33_Gemm_Scale_BatchNorm', '34_ConvTranspose3d_LayerNorm_GELU_Scaling', '35_Conv2d_Subtract_HardSwish_MaxPool_Mish', '36_ConvTranspose2d_Min_Sum_GELU_Add', '37_Matmul_Swish_Sum_GroupNorm', '38_ConvTranspose3d_AvgPool_Clamp_Softmax_Multiply', '39_Gemm_Scale_BatchNorm', '40_Matmul_Scaling_ResidualAdd', '41_Gemm_BatchNorm_GELU_ReLU', '42_ConvTranspose2d_GlobalAvgPool_BiasAdd_LogSumExp_Sum_Multiply', '43_Conv3d_Max_LogSumExp_ReLU', '44_ConvTranspose2d_Multiply_GlobalAvgPool_GlobalAvgPool_Mean', '45_Gemm_Sigmoid_LogSumExp', '46_Conv2d_Subtract_Tanh_Subtract_AvgPool', '47_Conv3d_Mish_Tanh', '48_Conv3d_Scaling_Tanh_Multiply_Sigmoid', '49_ConvTranspose3d_Softmax_Sigmoid', '50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling', '51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd', '52_Conv2d_Activation_BatchNorm', '53_Gemm_Scaling_Hardtanh_GELU', '54_Conv2d_Multiply_LeakyReLU_GELU', '55_Matmul_MaxPool_Sum_Scale', '56_Matmul_Sigmoid_Sum', '57_Conv2d_ReLU_HardSwish', '58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp', '59_Matmul_Swish_Scaling', '60_ConvTranspose3d_Swish_GroupNorm_HardSwish', '61_ConvTranspose3d_ReLU_GroupNorm', '62_Matmul_GroupNorm_LeakyReLU_Sum', '63_Gemm_ReLU_Divide', '64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU', '65_Conv2d_AvgPool_Sigmoid_Sum', '66_Matmul_Dropout_Softmax', '67_Conv2d_GELU_GlobalAvgPool', '68_Matmul_Min_Subtract', '69_Conv2d_HardSwish_ReLU', '70_Gemm_Sigmoid_Scaling_ResidualAdd', '71_Conv2d_Divide_LeakyReLU', '72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool', '73_Conv2d_BatchNorm_Scaling', '74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max', '75_Gemm_GroupNorm_Min_BiasAdd', '76_Gemm_Add_ReLU', '77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool', '78_ConvTranspose3d_Max_Max_Sum', '79_Conv3d_Multiply_InstanceNorm_Clamp_Multiply_Max', '80_Gemm_Max_Subtract_GELU', '81_Gemm_Swish_Divide_Clamp_Tanh_Clamp', '82_Conv2d_Tanh_Scaling_BiasAdd_Max', '83_Conv3d_GroupNorm_Min_Clamp_Dropout', '84_Gemm_BatchNorm_Scaling_Softmax', '85_Conv2d_GroupNorm_Scale_MaxPool_Clamp', '86_Matmul_Divide_GELU', '87_Conv2d_Subtract_Subtract_Mish', '88_Gemm_GroupNorm_Swish_Multiply_Swish', '89_ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max', '90_Conv3d_LeakyReLU_Sum_Clamp_GELU', '91_ConvTranspose2d_Softmax_BiasAdd_Scaling_Sigmoid', '92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp', '93_ConvTranspose2d_Add_Min_GELU_Multiply', '94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm', '95_Matmul_Add_Swish_Tanh_GELU_Hardtanh', '96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp', '97_Matmul_BatchNorm_BiasAdd_Divide_Swish', '98_Matmul_AvgPool_GELU_Scale_Max', '99_Matmul_GELU_Softmax', '100_ConvTranspose3d_Clamp_Min_Divide']

C2 = {"S": 1, "P": 0}   # Conv2d/3d with KernelBench's defaults (stride 1, no padding)
TRAIN_BN = ("BatchNorm runs in training mode as KernelBench runs it (it never calls eval()): "
            "batch statistics over every dim but the channel, biased variance; the running-stat "
            "update is a side effect and not part of the output.")


def bias_in(name, shape, init=N01):
    return {"name": name, "dtype": "f32", "shape": shape, "init": init}


def gn(name, groups, eps="eps"):
    return Norm("group", eps, name + "_weight", name + "_bias",
                "GroupNorm(%s groups of CO/%s channels, eps, affine %s_weight, %s_bias over CO)" % (groups, groups, name, name),
                groups=groups)


def affine(name, n):
    return [bias_in(name + "_weight", [n], GAMMA), bias_in(name + "_bias", [n], BETA)]


# ---------------------------------------------------------------- problems 1-20

problem(1, "conv2d_relu_bias_add", "Conv2d, ReLU, bias add", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1), broadcast over B, OH, OW")],
        ["x = torch.relu(x)", "x = x + extra_bias"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])])

problem(2, "conv_transpose2d_bias_add_clamp_scaling_clamp_divide", "ConvTranspose2d, bias add, clamp, scale, clamp, divide", "convT2d",
        dict(B=128, CI=64, CO=64, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"), Ew("l2_clamp(v, 0.0, 1.0)", "clamp to [0, 1]"),
         Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("l2_clamp(v, 0.0, 1.0)", "clamp to [0, 1]"),
         Ew("v / scaling_factor", "divide by scaling_factor")],
        ["x = x + extra_bias", "x = torch.clamp(x, min=0.0, max=1.0)", "x = x * d['scaling_factor']",
         "x = torch.clamp(x, min=0.0, max=1.0)", "x = x / d['scaling_factor']"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])], params=[("scaling_factor", 2.0)])

problem(3, "conv_transpose3d_sum_layer_norm_avg_pool_gelu", "ConvTranspose3d, add a scalar, LayerNorm over the last dim, AvgPool3d, GELU", "convT3d",
        dict(B=32, CI=32, CO=64, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Ew("v + sum_weight", "add the scalar sum_weight"),
         Norm("layer", "eps", "norm_weight", "norm_bias", "LayerNorm over the LAST dim (OW, which equals CO in every dims set, as in KernelBench where normalized_shape = (out_channels,)), eps, affine norm_weight, norm_bias (CO)"),
         Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2) over (OD, OH, OW)"),
         Ew("l2_gelu(v)", "GELU (exact, erf form)")],
        ["x = x + d['sum_weight']", "x = F.layer_norm(x, (x.shape[-1],), norm_weight, norm_bias, d['eps'])",
         "x = F.avg_pool3d(x, kernel_size=2)", "x = F.gelu(x)"],
        ["B", "CO", "OD/2", "OH/2", "OW/2"],
        extra_inputs=affine("norm", "CO"), params=[("sum_weight", 1.0), ("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 4},
        alt=[{"B": 3, "CI": 5, "CO": 10, "D": 3, "H": 7, "W": 5}, {"B": 1, "CI": 4, "CO": 16, "D": 2, "H": 5, "W": 8}],
        notes="sum_weight is a scalar nn.Parameter in KernelBench, fixed at 1.0: a param here.")

problem(4, "conv2d_mish_mish", "Conv2d, Mish, Mish", "conv2d",
        dict(B=64, CI=64, CO=128, H=256, W=256, K=3, **C2),
        [Ew("l2_mish(v)", "Mish (x * tanh(softplus(x)))"), Ew("l2_mish(v)", "Mish again")],
        ["x = F.mish(x)", "x = F.mish(x)"], ["B", "CO", "OH", "OW"])

problem(5, "conv_transpose2d_subtract_tanh", "ConvTranspose2d, subtract a bias, tanh", "convT2d",
        dict(B=32, CI=64, CO=64, H=256, W=256, K=4, S=2, P=1, OP=1),
        [Ew("v - {extra_bias}", "subtract extra_bias (CO, 1, 1)"), Ew("tanh(v)", "tanh")],
        ["x = x - extra_bias", "x = torch.tanh(x)"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])])

problem(6, "conv3d_softmax_max_pool_max_pool", "Conv3d, softmax over channels, two MaxPool3d", "conv3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, **C2),
        [Softmax(1, 2, "softmax over the channel dim"),
         Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2)"),
         Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2) again")],
        ["x = torch.softmax(x, dim=1)", "x = F.max_pool3d(x, 2)", "x = F.max_pool3d(x, 2)"],
        ["B", "CO", "OD/2/2", "OH/2/2", "OW/2/2"],
        small={"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "softmax outputs lie in (0, 1), about 1/CO = 0.06; float32 convolution and softmax err by ~1e-7 absolute; 1e-5 absolute and 1e-4 relative still fail TF32 products (~3e-4 relative on the logits, ~2e-5 on the probabilities), a softmax over the wrong dim and skipped pools"})

problem(7, "conv3d_relu_leaky_relu_gelu_sigmoid_bias_add", "Conv3d, ReLU, LeakyReLU, GELU, sigmoid, bias add", "conv3d",
        dict(B=64, CI=8, CO=32, D=32, H=64, W=64, K=3, **C2),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01) (the identity after ReLU)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("l2_sigmoid(v)", "sigmoid"),
         Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)")],
        ["x = torch.relu(x)", "x = F.leaky_relu(x, negative_slope=0.01)", "x = F.gelu(x)", "x = torch.sigmoid(x)", "x = x + extra_bias"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])])

problem(8, "conv3d_divide_max_global_avg_pool_bias_add_sum", "Conv3d, divide, MaxPool3d, global average pool, bias add, sum over channels", "conv3d",
        dict(B=128, CI=8, CO=16, D=16, H=64, W=64, K=3, **C2),
        [Ew("v / divisor", "divide by divisor"),
         Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2)"),
         Reduce(2, 5, "mean", True, "global average pool (AdaptiveAvgPool3d to 1x1x1)"),
         Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)"),
         Reduce(1, 2, "sum", True, "sum over the channel dim (dim 1, keepdim False in KernelBench's torch.sum; the result is (B, 1, 1, 1))")],
        ["x = x / d['divisor']", "x = F.max_pool3d(x, 2)", "x = F.adaptive_avg_pool3d(x, (1, 1, 1))", "x = x + extra_bias", "x = torch.sum(x, dim=1)"],
        ["B", 1, 1, 1], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])], params=[("divisor", 2.0)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
        tol={"atol": 1e-4, "rtol": 1e-4, "why": "outputs sum CO per-channel means of ~N(0.7, 0.3) maxima plus N(0, 1) biases, O(1..10); float32 pooling and a length-(OD/2*OH/2*OW/2) float32 mean err by ~1e-6 relative, inside 1e-4; TF32 products and a skipped max pool or bias fail"})

problem(9, "matmul_subtract_multiply_relu", "Linear, subtract, multiply, ReLU", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v - subtract_value", "subtract subtract_value"), Ew("v * multiply_value", "multiply by multiply_value"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = x - d['subtract_value']", "x = x * d['multiply_value']", "x = torch.relu(x)"], ["B", "OUT"],
        params=[("subtract_value", 2.0), ("multiply_value", 1.5)],
        degenerate="at PyTorch's init the Linear outputs have std ~0.58, so after subtracting 2 and the ReLU only ~0.03% of outputs are non-zero (3.5 sigma): an all-zero kernel fails only on those few elements")

problem(10, "conv_transpose2d_max_pool_hardtanh_mean_tanh", "ConvTranspose2d, MaxPool2d, Hardtanh, spatial mean, tanh", "convT2d",
        dict(B=128, CI=64, CO=64, H=256, W=256, K=3, S=1, P=1, OP=0),
        [Pool("max", ["2", "2"], ["2", "2"], "MaxPool2d(kernel 2, stride 2)"),
         Ew("l2_clamp(v, -1.0, 1.0)", "Hardtanh(-1, 1)"),
         Reduce(2, 4, "mean", True, "mean over (OH/2, OW/2), keepdim"),
         Ew("tanh(v)", "tanh")],
        ["x = F.max_pool2d(x, kernel_size=2, stride=2)", "x = F.hardtanh(x, min_val=-1.0, max_val=1.0)",
         "x = torch.mean(x, dim=(2, 3), keepdim=True)", "x = torch.tanh(x)"], ["B", "CO", 1, 1],
        notes="KernelBench's ConvTranspose2d here has no output padding (OP = 0).")

problem(11, "conv_transpose2d_batch_norm_tanh_max_pool_group_norm", "ConvTranspose2d, BatchNorm (training), tanh, MaxPool2d, GroupNorm", "convT2d",
        dict(B=512, CI=64, CO=128, H=32, W=32, K=5, S=1, P=1, OP=0, NG=8),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm2d in training mode (batch statistics over B, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Ew("tanh(v)", "tanh"),
         Pool("max", ["2", "2"], ["2", "2"], "MaxPool2d(kernel 2, stride 2)"),
         gn("gn", "NG")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])", "x = torch.tanh(x)",
         "x = F.max_pool2d(x, kernel_size=2, stride=2)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"],
        ["B", "CO", "OH/2", "OW/2"], extra_inputs=affine("bn", "CO") + affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "H": 5, "W": 6},
        alt=[{"B": 3, "CI": 5, "CO": 24, "H": 17, "W": 9}, {"B": 1, "CI": 16, "CO": 32, "H": 33, "W": 65}],
        notes=TRAIN_BN + " KernelBench's file sets height = width = 32 last (its earlier 2048 is overwritten).")

problem(12, "gemm_multiply_leaky_relu", "Linear, multiply, LeakyReLU", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v * multiplier", "multiply by multiplier"), Ew("l2_leaky(v, negative_slope)", "LeakyReLU(negative_slope)")],
        ["x = x * d['multiplier']", "x = F.leaky_relu(x, d['negative_slope'])"], ["B", "OUT"],
        params=[("multiplier", 2.0), ("negative_slope", 0.1)])

problem(13, "conv_transpose3d_mean_add_softmax_tanh_scaling", "ConvTranspose3d, mean over depth, bias add, softmax over channels, tanh, scale", "convT3d",
        dict(B=16, CI=16, CO=64, D=32, H=128, W=128, K=3, S=1, P=1, OP=0),
        [Reduce(2, 3, "mean", True, "mean over the depth dim OD, keepdim"),
         Ew("v + {extra_bias}", "add extra_bias (1, CO, 1, 1, 1)"),
         Softmax(1, 2, "softmax over the channel dim"), Ew("tanh(v)", "tanh"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = x.mean(dim=2, keepdim=True)", "x = x + extra_bias", "x = torch.softmax(x, dim=1)", "x = torch.tanh(x)", "x = x * d['scaling_factor']"],
        ["B", "CO", 1, "OH", "OW"], extra_inputs=[bias_in("extra_bias", [1, "CO", 1, 1, 1])], params=[("scaling_factor", 2.0)],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "outputs are 2*tanh of probabilities near 1/CO = 0.016; float32 math errs by ~1e-8 absolute; 1e-5 absolute still fails TF32 products, a softmax over the wrong dim and a skipped bias"},
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(14, "gemm_divide_sum_scaling", "matmul (no bias), divide by 2, row sum, scale", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v / 2.0", "divide by 2"), Reduce(1, 2, "sum", True, "sum over OUT, keepdim"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = x / 2", "x = torch.sum(x, dim=1, keepdim=True)", "x = x * d['scaling_factor']"], ["B", 1],
        bias=False, w_init=N01, params=[("scaling_factor", 1.5)],
        tol={"atol": 0.25, "rtol": 1e-4, "why": "the weight is N(0, 1) (torch.randn in KernelBench), so x @ weight^T has entries ~N(0, sqrt(IN)) = ~90 and each output sums OUT of them (magnitude ~6e3, some rows near 0 by cancellation); a float32 row sum of 8192 such terms errs by ~0.05 absolute whatever the size of the result (PyTorch's float32 GEMM and sum: up to 0.033 on the H100, 2.8x the earlier atol of 0.01), so atol 0.25; TF32 products err by ~5 absolute and fail, as does a sum over the wrong dim"},
        notes="The weight is a plain nn.Parameter drawn with torch.randn (OUT, IN): N(0, 1), no bias.")

problem(15, "conv_transpose3d_batch_norm_subtract", "ConvTranspose3d, BatchNorm (training), subtract the spatial mean", "convT3d",
        dict(B=16, CI=16, CO=32, D=16, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm3d in training mode (batch statistics over B, OD, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Save("bn_out"), Reduce(2, 5, "mean", True, "the mean over (OD, OH, OW) per (b, c), keepdim"),
         Ew("{bn_out} - v", "subtract that mean from the BatchNorm output", out_shape=["B", "CO", "OD", "OH", "OW"])],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])",
         "x = x - torch.mean(x, dim=(2, 3, 4), keepdim=True)"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("bn", "CO"), params=[("eps", 1e-5)],
        notes=TRAIN_BN + " KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(16, "conv_transpose2d_mish_add_hardtanh_scaling", "ConvTranspose2d, Mish, add, Hardtanh, scale", "convT2d",
        dict(B=128, CI=64, CO=64, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Ew("l2_mish(v)", "Mish"), Ew("v + add_value", "add add_value"), Ew("l2_clamp(v, -1.0, 1.0)", "Hardtanh(-1, 1)"), Ew("v * scale", "multiply by scale")],
        ["x = F.mish(x)", "x = x + d['add_value']", "x = F.hardtanh(x, min_val=-1, max_val=1)", "x = x * d['scale']"],
        ["B", "CO", "OH", "OW"], params=[("add_value", 0.5), ("scale", 2.0)])

problem(17, "conv2d_instance_norm_divide", "Conv2d, InstanceNorm, divide", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Norm("instance", "eps", None, None, "InstanceNorm2d (per (b, c) over OH, OW, biased variance, eps, no affine)"),
         Ew("v / divide_by", "divide by divide_by")],
        ["x = F.instance_norm(x, eps=d['eps'])", "x = x / d['divide_by']"], ["B", "CO", "OH", "OW"],
        params=[("eps", 1e-5), ("divide_by", 2.0)])

problem(18, "matmul_sum_max_avg_pool_log_sum_exp_log_sum_exp", "Linear, row sum, then max, mean and two logsumexp over a dim of size 1", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Reduce(1, 2, "sum", True, "sum over OUT, keepdim (B, 1)"),
         Ew("v", "max over dim 1 (size 1: the identity)"), Ew("v", "mean over dim 1 (identity)"),
         Ew("v", "logsumexp over dim 1 (identity: log(exp(v)) = v)"), Ew("v", "logsumexp over dim 1 again (identity)")],
        ["x = torch.sum(x, dim=1, keepdim=True)", "x = torch.max(x, dim=1, keepdim=True)[0]", "x = torch.mean(x, dim=1, keepdim=True)",
         "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = torch.logsumexp(x, dim=1, keepdim=True)"], ["B", 1],
        tol={"atol": 1e-3, "rtol": 1e-4, "why": "each output sums OUT Linear outputs of std ~0.58 (magnitude ~50); float32 GEMM plus a float32 sum over 8192 values err by ~1e-5 absolute; 1e-3 absolute rejects TF32 products (~1e-2 on the sum) and a sum over the wrong dim"})

problem(19, "conv_transpose2d_gelu_group_norm", "ConvTranspose2d, GELU, GroupNorm", "convT2d",
        dict(B=128, CI=64, CO=64, H=256, W=256, K=3, S=1, P=0, OP=0, NG=8),
        [Ew("l2_gelu(v)", "GELU (erf form)"), gn("gn", "NG")],
        ["x = F.gelu(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"], ["B", "CO", "OH", "OW"],
        extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "H": 5, "W": 6},
        alt=[{"B": 3, "CI": 5, "CO": 24, "H": 17, "W": 9}, {"B": 1, "CI": 16, "CO": 32, "H": 33, "W": 65}])

problem(20, "conv_transpose3d_sum_residual_add_multiply_residual_add", "ConvTranspose3d, bias add, residual add, multiply, residual add", "convT3d",
        dict(B=16, CI=32, CO=64, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Save("orig"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)"), Ew("v + {orig}", "add the ConvTranspose3d output (orig)"),
         Ew("v * {orig}", "multiply by orig"), Ew("v + {orig}", "add orig")],
        ["orig = x.clone()", "x = x + extra_bias", "x = x + orig", "x = x * orig", "x = x + orig"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])])

# ---------------------------------------------------------------- problems 21-40

problem(21, "conv2d_add_scale_sigmoid_group_norm", "Conv2d, bias add, scale, sigmoid, GroupNorm", "conv2d",
        dict(B=128, CI=8, CO=32, H=256, W=256, K=3, NG=8, **C2),
        [Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"), Ew("v * {scale}", "multiply by scale (CO, 1, 1)"),
         Ew("l2_sigmoid(v)", "sigmoid"), gn("gn", "NG")],
        ["x = x + extra_bias", "x = x * scale", "x = torch.sigmoid(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"],
        ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1]), bias_in("scale", ["CO", 1, 1])] + affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "H": 10, "W": 12},
        alt=[{"B": 3, "CI": 5, "CO": 24, "H": 33, "W": 17}, {"B": 1, "CI": 16, "CO": 32, "H": 67, "W": 131}])

problem(22, "matmul_scale_residual_add_clamp_log_sum_exp_mish", "Linear, scale, x + x, clamp, logsumexp, x * mish(x)", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v * scale_factor", "multiply by scale_factor"), Ew("v + v", "add the result to itself"),
         Ew("l2_clamp(v, clamp_min, clamp_max)", "clamp to [clamp_min, clamp_max]"),
         Reduce(1, 2, "lse", True, "logsumexp over OUT, keepdim (B, 1)"), Ew("v * l2_mish(v)", "x * mish(x)")],
        ["x = x * d['scale_factor']", "x = x + x", "x = torch.clamp(x, d['clamp_min'], d['clamp_max'])",
         "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = x * F.mish(x)"], ["B", 1],
        params=[("scale_factor", 2.0), ("clamp_min", -10.0), ("clamp_max", 10.0)])

problem(23, "conv3d_group_norm_mean", "Conv3d, GroupNorm, mean over all but the batch", "conv3d",
        dict(B=128, CI=3, CO=24, D=24, H=32, W=32, K=3, NG=8, **C2),
        [gn("gn", "NG"), Reduce(1, 5, "mean", False, "mean over (CO, OD, OH, OW): one value per batch element")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = x.mean(dim=[1, 2, 3, 4])"], ["B"],
        extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 24, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 32, "D": 6, "H": 34, "W": 67}],
        notes="With PyTorch's GroupNorm init (weight ones, bias zeros) the output would be zero up to rounding; gn_weight and gn_bias are drawn N(1, 0.5) and N(0, 0.5) so it is not.")

problem(24, "conv3d_min_softmax", "Conv3d, min over depth, softmax over channels", "conv3d",
        dict(B=128, CI=3, CO=24, D=24, H=32, W=32, K=3, **C2),
        [Reduce(2, 3, "min", False, "min over the depth dim OD (no keepdim): (B, CO, OH, OW)"), Softmax(1, 2, "softmax over the channel dim")],
        ["x = torch.min(x, dim=2)[0]", "x = torch.softmax(x, dim=1)"], ["B", "CO", "OH", "OW"],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "softmax outputs near 1/CO = 0.04; float32 math errs by ~1e-8 absolute; 1e-5 absolute still fails TF32 products, a min over the wrong dim and a softmax over the wrong dim"})

problem(25, "conv2d_min_tanh_tanh", "Conv2d, min over channels, tanh, tanh", "conv2d",
        dict(B=128, CI=16, CO=64, H=256, W=256, K=3, **C2),
        [Reduce(1, 2, "min", True, "min over the channel dim, keepdim (B, 1, OH, OW)"), Ew("tanh(v)", "tanh"), Ew("tanh(v)", "tanh again")],
        ["x = torch.min(x, dim=1, keepdim=True)[0]", "x = torch.tanh(x)", "x = torch.tanh(x)"], ["B", 1, "OH", "OW"])

problem(26, "conv_transpose3d_add_hard_swish", "ConvTranspose3d, add an input, x * hardswish(x)", "convT3d",
        dict(B=128, CI=32, CO=64, D=16, H=16, W=16, K=3, S=2, P=1, OP=1),
        [Ew("v + {add_input}", "add the input add_input (B, CO, OD, OH, OW)"), Ew("v * l2_hardswish(v)", "x * hardswish(x)")],
        ["x = x + add_input", "x = x * F.hardswish(x)"], ["B", "CO", "OD", "OH", "OW"],
        extra_inputs=[bias_in("add_input", ["B", "CO", "OD", "OH", "OW"])],
        notes="KernelBench's module also creates a bias parameter that forward never uses; it is left out. add_input is the second forward input.")

problem(27, "conv3d_hard_swish_group_norm_mean", "Conv3d, hardswish, GroupNorm, spatial mean", "conv3d",
        dict(B=1024, CI=3, CO=16, D=16, H=32, W=32, K=4, NG=4, **C2),
        [Ew("l2_hardswish(v)", "hardswish"), gn("gn", "NG"), Reduce(2, 5, "mean", False, "mean over (OD, OH, OW): (B, CO)")],
        ["x = F.hardswish(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = torch.mean(x, dim=[2, 3, 4])"], ["B", "CO"],
        extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 12, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
        notes="The per-channel spatial mean of a GroupNorm output is bias + weight * (channel mean - group mean)/std: non-trivial because the channels of a group differ.")

problem(28, "bmm_instance_norm_sum_residual_add_multiply", "Linear, instance norm over the features, add y, multiply by y", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Norm("layer", "eps", None, None, "InstanceNorm2d applied to x viewed as (B, 1, 1, OUT): per row, over the OUT features, biased variance, eps, no affine"),
         Ew("v + {y_in}", "add the input y_in (B, OUT)"), Ew("v * {y_in}", "multiply by y_in")],
        ["x = F.instance_norm(x.unsqueeze(1).unsqueeze(1), eps=d['eps']).squeeze(1).squeeze(1)", "x = x + y_in", "x = x * y_in"], ["B", "OUT"],
        extra_inputs=[bias_in("y_in", ["B", "OUT"])], params=[("eps", 1e-5)],
        notes="y_in is KernelBench's second forward input y.")

problem(29, "matmul_mish_mish", "Linear, Mish, Mish", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("l2_mish(v)", "Mish"), Ew("l2_mish(v)", "Mish again")],
        ["x = F.mish(x)", "x = F.mish(x)"], ["B", "OUT"])

problem(30, "gemm_group_norm_hardtanh", "Linear, GroupNorm, Hardtanh", "linear",
        dict(B=1024, IN=8192, OUT=8192, NG=16),
        [Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG"),
         Ew("l2_clamp(v, hardtanh_min, hardtanh_max)", "Hardtanh(hardtanh_min, hardtanh_max)")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = F.hardtanh(x, d['hardtanh_min'], d['hardtanh_max'])"], ["B", "OUT"],
        extra_inputs=affine("gn", "OUT"), params=[("eps", 1e-5), ("hardtanh_min", -2.0), ("hardtanh_max", 2.0)],
        small={"B": 4, "IN": 40, "OUT": 32}, alt=[{"B": 5, "IN": 257, "OUT": 48}, {"B": 33, "IN": 1024, "OUT": 160}])

problem(31, "conv2d_min_add_multiply", "Conv2d, min with a constant, bias add, scale", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("fmin(v, constant_value)", "min(x, constant_value) elementwise"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"),
         Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = torch.min(x, torch.tensor(d['constant_value'], dtype=x.dtype, device=x.device))", "x = x + extra_bias", "x = x * d['scaling_factor']"],
        ["B", "CO", "OH", "OW"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])], params=[("constant_value", 0.5), ("scaling_factor", 2.0)])

problem(32, "conv2d_scaling_min", "Conv2d, scale, min over channels", "conv2d",
        dict(B=64, CI=64, CO=128, H=256, W=256, K=3, **C2),
        [Ew("v * scale_factor", "multiply by scale_factor"), Reduce(1, 2, "min", True, "min over the channel dim, keepdim (B, 1, OH, OW)")],
        ["x = x * d['scale_factor']", "x = torch.min(x, dim=1, keepdim=True)[0]"], ["B", 1, "OH", "OW"], params=[("scale_factor", 2.0)])

problem(33, "gemm_scale_batch_norm", "Linear, scale, BatchNorm1d (training)", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v * {scale}", "multiply by scale (OUT)"),
         Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)")],
        ["x = x * scale", "x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])"], ["B", "OUT"],
        extra_inputs=[bias_in("scale", ["OUT"])] + affine("bn", "OUT"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(34, "conv_transpose3d_layer_norm_gelu_scaling", "ConvTranspose3d, LayerNorm over the last dim, GELU, scale", "convT3d",
        dict(B=32, CI=32, CO=64, D=16, H=32, W=32, K=4, S=2, P=1, OP=0),
        [Norm("layer", "eps", "ln_weight", "ln_bias", "LayerNorm over the LAST dim (OW, which equals CO in every dims set, as in KernelBench where normalized_shape = (out_channels,)), eps, affine ln_weight, ln_bias (CO)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = F.layer_norm(x, (x.shape[-1],), ln_weight, ln_bias, d['eps'])", "x = F.gelu(x)", "x = x * d['scaling_factor']"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("ln", "CO"), params=[("eps", 1e-5), ("scaling_factor", 1.0)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 4},
        alt=[{"B": 3, "CI": 5, "CO": 10, "D": 3, "H": 7, "W": 5}, {"B": 1, "CI": 4, "CO": 16, "D": 2, "H": 5, "W": 8}],
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(35, "conv2d_subtract_hard_swish_max_pool_mish", "Conv2d, subtract, hardswish, MaxPool2d, Mish", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("v - subtract_value", "subtract subtract_value"), Ew("l2_hardswish(v)", "hardswish"),
         Pool("max", ["2", "2"], ["2", "2"], "MaxPool2d(kernel 2, stride 2)"), Ew("l2_mish(v)", "Mish")],
        ["x = x - d['subtract_value']", "x = F.hardswish(x)", "x = F.max_pool2d(x, 2)", "x = F.mish(x)"],
        ["B", "CO", "OH/2", "OW/2"], params=[("subtract_value", 0.5)])

problem(36, "conv_transpose2d_min_sum_gelu_add", "ConvTranspose2d, min over channels, sum over height, GELU, bias add", "convT2d",
        dict(B=16, CI=64, CO=128, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Reduce(1, 2, "min", True, "min over the channel dim, keepdim (B, 1, OH, OW)"),
         Reduce(2, 3, "sum", True, "sum over the height dim, keepdim (B, 1, 1, OW)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("v + {extra_bias}", "add extra_bias (1, 1, 1)")],
        ["x = torch.min(x, dim=1, keepdim=True)[0]", "x = torch.sum(x, dim=2, keepdim=True)", "x = F.gelu(x)", "x = x + extra_bias"],
        ["B", 1, 1, "OW"], extra_inputs=[bias_in("extra_bias", [1, 1, 1])],
        tol={"atol": 1e-4, "rtol": 1e-4, "why": "outputs are GELU of sums of OH channel minima (magnitude ~OH); float32 math errs by ~1e-6 relative, inside 1e-4; TF32 products and a min or sum over the wrong dim fail"})

problem(37, "matmul_swish_sum_group_norm", "Linear, swish, bias add, GroupNorm", "linear",
        dict(B=32768, IN=1024, OUT=4096, NG=64),
        [Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))"), Ew("v + {extra_bias}", "add extra_bias (OUT)"),
         Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG")],
        ["x = torch.sigmoid(x) * x", "x = x + extra_bias", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"], ["B", "OUT"],
        extra_inputs=[bias_in("extra_bias", ["OUT"])] + affine("gn", "OUT"), params=[("eps", 1e-5)],
        small={"B": 4, "IN": 40, "OUT": 128}, alt=[{"B": 5, "IN": 257, "OUT": 192}, {"B": 33, "IN": 1024, "OUT": 640}])

problem(39, "gemm_scale_batch_norm", "Linear, scale, BatchNorm1d (training), batch 16384", "linear",
        dict(B=16384, IN=4096, OUT=4096),
        [Ew("v * {scale}", "multiply by scale (OUT)"),
         Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)")],
        ["x = x * scale", "x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])"], ["B", "OUT"],
        extra_inputs=[bias_in("scale", ["OUT"])] + affine("bn", "OUT"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(40, "matmul_scaling_residual_add", "Linear, scale, residual add", "linear",
        dict(B=16384, IN=4096, OUT=4096),
        [Save("orig"), Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("v + {orig}", "add the Linear output (orig)")],
        ["orig = x.clone()", "x = x * d['scaling_factor']", "x = x + orig"], ["B", "OUT"], params=[("scaling_factor", 0.5)],
        notes="The result is (1 + scaling_factor) times the Linear output.")

# ---------------------------------------------------------------- problems 41-

problem(41, "gemm_batch_norm_gelu_relu", "Linear, BatchNorm1d (training), GELU, ReLU", "linear",
        dict(B=16384, IN=4096, OUT=4096),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])", "x = F.gelu(x)", "x = torch.relu(x)"],
        ["B", "OUT"], extra_inputs=affine("bn", "OUT"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(42, "conv_transpose2d_global_avg_pool_bias_add_log_sum_exp_sum_multiply", "ConvTranspose2d, global average pool, bias add, logsumexp over channels, sum, multiply", "convT2d",
        dict(B=16, CI=64, CO=128, H=512, W=512, K=3, S=1, P=0, OP=0),
        [Reduce(2, 4, "mean", True, "mean over (OH, OW), keepdim (B, CO, 1, 1)"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"),
         Reduce(1, 2, "lse", True, "logsumexp over the channel dim, keepdim (B, 1, 1, 1)"),
         Reduce(2, 4, "sum", False, "sum over the two trailing size-1 dims: (B, 1)"), Ew("v * 10.0", "multiply by 10")],
        ["x = torch.mean(x, dim=(2, 3), keepdim=True)", "x = x + extra_bias", "x = torch.logsumexp(x, dim=1, keepdim=True)",
         "x = torch.sum(x, dim=(2, 3))", "x = x * 10.0"], ["B", 1], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])],
        tol={"atol": 1e-4, "rtol": 1e-4, "why": "outputs are 10 * logsumexp over CO of spatial means plus N(0, 1) biases, magnitude ~50; a float32 mean over OH*OW = 264196 values errs by ~1e-6 relative when blocked, inside 1e-4; TF32 products, a skipped bias and a reduction over the wrong dim fail"})

problem(43, "conv3d_max_log_sum_exp_relu", "Conv3d (padded), MaxPool3d, logsumexp over channels, ReLU", "conv3d",
        dict(B=4, CI=32, CO=64, D=32, H=128, W=128, K=3, S=1, P=1),
        [Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2)"),
         Reduce(1, 2, "lse", True, "logsumexp over the channel dim, keepdim (B, 1, OD/2, OH/2, OW/2)"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = F.max_pool3d(x, kernel_size=2, stride=2)", "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = torch.relu(x)"],
        ["B", 1, "OD/2", "OH/2", "OW/2"])

problem(44, "conv_transpose2d_multiply_global_avg_pool_global_avg_pool_mean", "ConvTranspose2d, multiply, two global average pools", "convT2d",
        dict(B=16, CI=64, CO=128, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Ew("v * multiplier", "multiply by multiplier"), Reduce(2, 4, "mean", True, "mean over (OH, OW), keepdim (B, CO, 1, 1)"),
         Ew("v", "mean over the two size-1 dims again (the identity)")],
        ["x = x * d['multiplier']", "x = torch.mean(x, dim=[2, 3], keepdim=True)", "x = torch.mean(x, dim=[2, 3], keepdim=True)"],
        ["B", "CO", 1, 1], params=[("multiplier", 0.5)],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "outputs are spatial means, ~0.5 * bias (|bias| < 1/sqrt(CO*K*K) = 0.03) plus averaging noise of ~1e-3: 1e-5 absolute keeps a zero output and a skipped bias failing; float32 means over OH*OW = 65536 values err by ~1e-8 absolute"})

problem(45, "gemm_sigmoid_log_sum_exp", "Linear, sigmoid, Linear, logsumexp", "linear",
        dict(B=16384, IN=2048, OUT=4096, O2=1024),
        [Ew("l2_sigmoid(v)", "sigmoid (rounded to float32, as the second Linear reads a float32 tensor)"),
         Linear2("weight2", "bias2", "O2", "a second Linear: x @ weight2^T + bias2 (weight2 (O2, OUT), bias2 (O2))"),
         Reduce(1, 2, "lse", False, "logsumexp over O2: (B)")],
        ["x = torch.sigmoid(x)", "x = F.linear(x, weight2, bias2)", "x = torch.logsumexp(x, dim=1)"], ["B"],
        extra_inputs=[{"name": "weight2", "dtype": "f32", "shape": ["O2", "OUT"], "init": {"dist": "uniform_fan_in", "fan_in": "OUT"}},
                      {"name": "bias2", "dtype": "f32", "shape": ["O2"], "init": {"dist": "uniform_fan_in", "fan_in": "OUT"}}],
        small={"B": 4, "IN": 40, "OUT": 24, "O2": 12},
        alt=[{"B": 5, "IN": 257, "OUT": 131, "O2": 67}, {"B": 33, "IN": 1024, "OUT": 1000, "O2": 100}],
        epi_flops="2*B*OUT*O2")

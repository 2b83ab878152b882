"""level3_specs: one function per KernelBench level-3 network, each building a level3_net.Net
(manifest parts and the reference's launch schedule); tools/problems/gen_level3.py writes them.
Sizes are KernelBench's (its test code); docs/LEVEL3.md says how a spec is written and lists
the status of all 50."""
from level3_net import Net, NORMAL, fan_in
import kcproblems  # noqa: E402 (level3_net put tools/problems on the path)

COMMON = ("float32 throughout. The PyTorch source above is KernelBench's own; run it as "
          "KernelBench does (training mode: BatchNorm uses batch statistics, Dropout p = 0 is the "
          "identity). Every module parameter is an input: they are packed into `params`, one "
          "view per parameter (or per stack of identical layers), each named with the PyTorch "
          "parameter it holds and drawn with PyTorch's default initialiser for it (Linear and Conv "
          "weights and biases uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)); BatchNorm weight ones and "
          "bias zeros, varied by the checks). ")
X_NOTE = "The input x is N(0, 1) (KernelBench draws torch.rand: with it ReLU is the identity). "


def values(structure_atol, structure_why, large=0, large_atol=None, large_why=None,
           special=("-0",), special_why=None):
    v = {"large": {"scale": large, "why": large_why or
                   "no softmax, exponential or normalisation in the network: magnitude only scales it "
                   "(piecewise linear), which the structured runs cover"}}
    if large:
        v["large"]["atol"] = large_atol
    v["structure"] = {"on": True, "atol": structure_atol, "why": structure_why}
    v["special"] = {"values": list(special), "why": special_why or
                    "only -0 (acts as 0): the products and convolutions of PyTorch pick their algorithm, "
                    "and ReLU or max pool written with comparisons decide where a NaN or inf goes, so "
                    "the network defines no result for them"}
    return v


def mlp_tolerance(k_max, layers):
    return {"atol": 1e-4, "rtol": 1e-4,
            "why": "KernelBench's float32 tolerance. %d Linear layers with inner dims up to %s at "
                   "PyTorch's init: each layer's outputs are O(0.1-1) and float32 accumulation in any order errs "
                   "by ~1e-6 relative per layer (the reference rounds each layer's exact double result once), "
                   "well inside 1e-4; TF32 or half-precision products (relative error ~5e-4 per product) fail"
                   % (layers, k_max)}


MLP_STRUCT_WHY = ("each Linear sums products that take up to 8x from the scaled activation and 8x from the "
                  "scaled weight view (per-row and per-column scales), and the scales compound over the "
                  "layers, so float32 rounding near cancelling outputs grows by 64x a layer at worst; "
                  "atol x%d (an estimate, to be calibrated on the H100 with tools/baselines/crosscheck.py's "
                  "float32 run); no spikes: every output mixes every input element")


# ---------------------------------------------------------------- 1-3: MLPs

def mlp(num, name, kb_name, title, default, small, alt, hidden_dims, hidden_why, struct_atol,
        sizes_text):
    """Linear(IN, H1) ReLU Linear(H1, H2) ReLU Linear(H2, OUT): KernelBench's 1 and 2."""
    n = Net(num, name, kb_name, title)
    n.input("x", ["B", "IN"])
    w0, b0 = n.linear_views("fc0", "H1", "IN", "network.0")
    w1, b1 = n.linear_views("fc1", "H2", "H1", "network.2")
    w2, b2 = n.linear_views("fc2", "OUT", "H2", "network.4")
    n.output("y", ["B", "OUT"])
    n.buf("a0", "B*H1")
    n.buf("a1", "B*H2")
    n.buf("acc", "B*max(H1, max(H2, OUT))", "f64")
    n.linear("x", w0, b0, "a0", "B", "H1", "IN", "L3_RELU")
    n.linear("a0", w1, b1, "a1", "B", "H2", "H1", "L3_RELU")
    n.linear("a1", w2, b2, "y", "B", "OUT", "H2")
    n.notes += ["Three nn.Linear layers, ReLU after the first two: each product on the FP64 tensor cores",
                "into double scratch, then bias and ReLU in double, rounded to float once per layer."]
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): a multi-layer perceptron, Linear(IN, H1), "
                       "ReLU, Linear(H1, H2), ReLU, Linear(H2, OUT) on x (B, IN); KernelBench's sizes %s "
                       "(layer_sizes = [H1, H2]). " % (num, kb_name, sizes_text) + COMMON + X_NOTE +
                       "Output y (B, OUT).",
        "torch_model": {"globals": {"batch_size": "B"}, "init": ["IN", "[H1, H2]", "OUT"], "forward": ["x"]},
        "dims": {"default": default, "small": small, "alt": alt},
        "hidden": {"dims": hidden_dims, "why": hidden_why},
        "values": values(struct_atol, MLP_STRUCT_WHY % struct_atol),
        "tolerance": mlp_tolerance("%d" % max(default["IN"], default["H1"], default["H2"]), 3),
        "bytes": "4*(B*IN + %s + B*OUT)" % n.params_numel(),
        "flops": "2*B*(IN*H1 + H1*H2 + H2*OUT)",
    }
    return n


def p001():
    return mlp(1, "mlp", "1_MLP", "MLP (two hidden layers)",
               {"B": 128, "IN": 16384, "H1": 16384, "H2": 16384, "OUT": 8192},
               {"B": 2, "IN": 33, "H1": 17, "H2": 9, "OUT": 5},
               [{"B": 3, "IN": 257, "H1": 129, "H2": 65, "OUT": 31},
                {"B": 1, "IN": 4097, "H1": 1, "H2": 3, "OUT": 1}],
               {"B": {"min": 1, "max": 160}, "IN": {"min": 1, "max": 4096}, "H1": {"min": 1, "max": 4096},
                "H2": {"min": 1, "max": 4096}, "OUT": {"min": 1, "max": 2048}},
               "any sizes: the reference's 64x64 product tiles are masked at every edge; B up to 160 "
               "crosses the 64-row tiles, the widths up to 4096 cross the 64-column tiles and the 32-wide "
               "inner slices (odd and prime widths, widths of 1); at most 1.3e10 flops and 170 MB of "
               "weights a draw",
               256, "B = 128, IN = 16384, H1 = H2 = 16384, OUT = 8192")


def p002():
    return mlp(2, "shallow_wide_mlp", "2_ShallowWideMLP", "Shallow wide MLP",
               {"B": 128, "IN": 16384, "H1": 32768, "H2": 32768, "OUT": 16384},
               {"B": 2, "IN": 17, "H1": 33, "H2": 31, "OUT": 7},
               [{"B": 3, "IN": 129, "H1": 257, "H2": 255, "OUT": 65},
                {"B": 1, "IN": 1, "H1": 4097, "H2": 1, "OUT": 3}],
               {"B": {"min": 1, "max": 160}, "IN": {"min": 1, "max": 2048}, "H1": {"min": 1, "max": 4096},
                "H2": {"min": 1, "max": 4096}, "OUT": {"min": 1, "max": 2048}},
               "any sizes: the reference's 64x64 product tiles are masked at every edge; B up to 160 "
               "crosses the 64-row tiles, the widths cross the 64-column tiles and the 32-wide inner "
               "slices (odd and prime widths, widths of 1); at most 1.1e10 flops and 170 MB of weights "
               "a draw",
               256, "B = 128, IN = 16384, H1 = H2 = 32768, OUT = 16384")


def p003():
    """Linear(IN, H) ReLU, then L - 1 times Linear(H, H) ReLU (one stacked view), Linear(H, OUT)."""
    n = Net(3, "deep_narrow_mlp", "3_DeepNarrowMLP", "Deep narrow MLP (L hidden layers)")
    n.input("x", ["B", "IN"])
    w0, b0 = n.linear_views("fc0", "H", "IN", "network.0")
    wl, bl = n.linear_views("fch", "H", "H", "network.{2*i+2}", stack="L-1")
    wo, bo = n.linear_views("fco", "OUT", "H", "network.{2*L}")
    n.output("y", ["B", "OUT"])
    n.buf("act", "2*B*H")
    n.buf("acc", "B*max(H, OUT)", "f64")
    n.linear("x", w0, b0, "act", "B", "H", "IN", "L3_RELU")
    with n.loop("l", 0, "L-1"):
        n.linear("act[(l % 2)*B*H]", "%s[l*H*H]" % wl, "%s[l*H]" % bl, "act[((l + 1) % 2)*B*H]",
                 "B", "H", "H", "L3_RELU")
    n.linear("act[((L - 1) % 2)*B*H]", wo, bo, "y", "B", "OUT", "H")
    n.notes += ["L + 1 nn.Linear layers, ReLU after all but the last; the L - 1 hidden-to-hidden layers",
                "are one stacked view run by a @for loop over two activation buffers used in turn."]
    n.manifest = {
        "description": "KernelBench level 3, problem 3 (3_DeepNarrowMLP): a deep multi-layer perceptron, "
                       "Linear(IN, H), ReLU, then L - 1 times Linear(H, H), ReLU, then Linear(H, OUT), on x "
                       "(B, IN); KernelBench's sizes B = 1024, IN = 8192, L = 16 hidden layers of H = 1024, "
                       "OUT = 8192 (hidden_layer_sizes = [H] * L). The L - 1 hidden-to-hidden layers' "
                       "weights and biases are stacked in one view each (fch_w [L-1, H, H], fch_b [L-1, H]; "
                       "layer l of the stack is network.{2l+2}). " + COMMON + X_NOTE + "Output y (B, OUT).",
        "torch_model": {"globals": {"batch_size": "B"}, "init": ["IN", "[H] * L", "OUT"], "forward": ["x"]},
        "dims": {"default": {"B": 1024, "IN": 8192, "L": 16, "H": 1024, "OUT": 8192},
                 "small": {"B": 2, "IN": 9, "L": 3, "H": 17, "OUT": 5},
                 "alt": [{"B": 3, "IN": 257, "L": 5, "H": 65, "OUT": 33},
                         {"B": 65, "IN": 1, "L": 1, "H": 4097, "OUT": 1}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 512}, "IN": {"min": 1, "max": 2048},
                            "L": {"min": 1, "max": 24}, "H": {"min": 1, "max": 1024},
                            "OUT": {"min": 1, "max": 2048}},
                   "why": "any sizes and depths: L = 1 has no hidden-to-hidden layer (an empty stack and an "
                          "empty loop), L up to 24 runs past KernelBench's 16; the reference's 64x64 product "
                          "tiles are masked at every edge (odd, prime and unit widths); at most 2e10 flops a draw"},
        "values": values(1024, MLP_STRUCT_WHY % 1024),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. L + 1 = 17 Linear layers of inner dims up to "
                             "8192 at PyTorch's init keep the activations O(0.1-1) (uniform fan-in weights); "
                             "float32 accumulation errs by ~1e-6 relative per layer, and the errors of 17 "
                             "layers add to ~1e-5, inside 1e-4; TF32 products (~5e-4 a product) fail"},
        "bytes": "4*(B*IN + %s + B*OUT)" % n.params_numel(),
        "flops": "2*B*(IN*H + (L - 1)*H*H + H*OUT)",
    }
    return n


SPECS = [p001, p002, p003]


# ---------------------------------------------------------------- convolutional networks

CONV_STRUCT_WHY = ("each convolution and Linear sums products that take up to 8x from the scaled input "
                   "and 8x from the scaled weight views (per-row and per-column scales), compounding over "
                   "the layers, so float32 rounding near cancelling outputs grows by up to 64x a layer; "
                   "atol x%d (an estimate, to be calibrated on the H100 with tools/baselines/crosscheck.py's "
                   "float32 run); no spikes: every output mixes many input elements")
BN_STRUCT_WHY = ("the scaled inputs and weight views (per-row and per-column scales up to 8x) change "
                 "each convolution's outputs by channel, and training-mode BatchNorm renormalises each "
                 "channel, so float32 rounding relative to the outputs stays near the unscaled runs'; "
                 "atol x%d for the convolution sums that cancel (an estimate, to be calibrated on the "
                 "H100); no spikes: every output mixes many input elements")
BN_LARGE_WHY = ("training-mode BatchNorm makes each block invariant to the scale of its input, and the "
                "rest is piecewise linear: the structured runs cover magnitude")


def conv_bias_act(n, x, w, b, y, tmp, B, CI, CO, H, W, OH, OW, K, S, P, act="L3_RELU", cc=4, split=True):
    """nn.Conv2d with bias, then an activation: conv2d_ref into tmp, bias and act into y."""
    n.conv(x, w, tmp, B, CI, CO, H, W, OH, OW, K, S, P, cc=cc, split=split)
    n.bias_act(tmp, b, y, "(%s)*(%s)*(%s)*(%s)" % (B, CO, OH, OW), "(%s)*(%s)" % (OH, OW), CO, act)


def conv_bn(n, x, w, g, b, y, tmp, B, CI, CO, H, W, OH, OW, K, S, P, act="L3_RELU", res="0", cc=4, G=1):
    """nn.Conv2d without bias, training-mode BatchNorm2d, optional residual, activation."""
    n.conv(x, w, tmp, B, CI, CO, H, W, OH, OW, K, S, P, G=G, cc=cc)
    n.bn(tmp, "stats", g, b, y, B, CO, "(%s)*(%s)" % (OH, OW), act, res)


def cnn_tolerance(layers):
    return {"atol": 1e-4, "rtol": 1e-4,
            "why": "KernelBench's float32 tolerance. %s at PyTorch's init keep the activations O(0.1-1); "
                   "a float32 implementation errs by ~1e-6 relative per layer (sums of up to a few "
                   "thousand products in any order; the reference rounds each layer's exact double result "
                   "once), which adds to ~1e-5 over the layers, inside 1e-4; TF32 products (~5e-4 a "
                   "product) fail" % layers}


def sizes(h, chain):
    """Spatial size after each (k, s, p) step of chain (floor mode)."""
    out = []
    for k, s, p in chain:
        h = (h + 2 * p - k) // s + 1
        out.append(h)
    return out


def p004():
    n = Net(4, "lenet5", "4_LeNet5", "LeNet-5")
    n.input("x", ["B", 1, 32, 32])
    c1w, c1b = n.conv_views("conv1", 6, 1, 5, "conv1")
    c2w, c2b = n.conv_views("conv2", 16, 6, 5, "conv2")
    f1w, f1b = n.linear_views("fc1", 120, 400, "fc1")
    f2w, f2b = n.linear_views("fc2", 84, 120, "fc2")
    f3w, f3b = n.linear_views("fc3", "NC", 84, "fc3")
    n.output("y", ["B", "NC"])
    n.buf("t", "B*6*28*28")
    n.buf("a", "B*6*28*28")
    n.buf("p", "B*6*14*14")
    n.buf("acc", "B*max(120, NC)", "f64")
    conv_bias_act(n, "x", c1w, c1b, "a", "t", "B", 1, 6, 32, 32, 28, 28, 5, 1, 0)
    n.maxpool("a", "p", "B*6", 28, 28, 14, 14, 2, 2)
    conv_bias_act(n, "p", c2w, c2b, "a", "t", "B", 6, 16, 14, 14, 10, 10, 5, 1, 0)
    n.maxpool("a", "p", "B*16", 10, 10, 5, 5, 2, 2)
    n.linear("p", f1w, f1b, "a", "B", 120, 400, "L3_RELU")
    n.linear("a", f2w, f2b, "t", "B", 84, 120, "L3_RELU")
    n.linear("t", f3w, f3b, "y", "B", "NC", 84)
    n.notes += ["conv (conv2d_ref), bias and ReLU in double, 2x2 max pool, twice; then three Linear layers",
                "(FP64 tensor-core products, bias and ReLU in double)."]
    n.manifest = {
        "description": "KernelBench level 3, problem 4 (4_LeNet5): LeNet-5 on x (B, 1, 32, 32): Conv2d(1, 6, 5), "
                       "ReLU, max pool 2x2 stride 2, Conv2d(6, 16, 5), ReLU, max pool 2x2, flatten to 400, "
                       "Linear(400, 120), ReLU, Linear(120, 84), ReLU, Linear(84, NC); KernelBench's sizes B = "
                       "4096, NC = 20 (the 32x32 image is fixed by the flatten to 16*5*5). " + COMMON + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "num_classes": "NC"}, "init": ["NC"], "forward": ["x"]},
        "dims": {"default": {"B": 4096, "NC": 20}, "small": {"B": 2, "NC": 3},
                 "alt": [{"B": 3, "NC": 1}, {"B": 65, "NC": 129}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 4500}, "NC": {"min": 1, "max": 1000}},
                   "why": "any batch and class count: the convolutions' tiles and the Linear layers' 64x64 "
                          "tiles are masked at every edge; B past 4096 (KernelBench's) and off multiples of 64, "
                          "NC 1 to 1000 (odd, prime)"},
        "values": values(64, CONV_STRUCT_WHY % 64),
        "tolerance": cnn_tolerance("Two convolutions (25 and 150 terms) and three Linear layers (400, 120, 84)"),
        "bytes": "4*(B*32*32 + %s + B*NC)" % n.params_numel(),
        "flops": "2*B*(6*28*28*25 + 16*10*10*150 + 400*120 + 120*84 + 84*NC)",
    }
    return n


def p005():
    n = Net(5, "alexnet", "5_AlexNet", "AlexNet")
    n.input("x", ["B", 3, "H", "W"])
    convs = [("conv1", 96, 3, 11, 4, 2), ("conv2", 256, 96, 5, 1, 2), ("conv3", 384, 256, 3, 1, 1),
             ("conv4", 384, 384, 3, 1, 1), ("conv5", 256, 384, 3, 1, 1)]
    cv = [n.conv_views(nm, co, ci, k, nm) for nm, co, ci, k, s, p in convs]
    f1w, f1b = n.linear_views("fc1", 4096, 9216, "fc1")
    f2w, f2b = n.linear_views("fc2", 4096, 4096, "fc2")
    f3w, f3b = n.linear_views("fc3", "NC", 4096, "fc3")
    n.output("y", ["B", "NC"])
    big = "B*96*C1H*C1W"
    n.buf("t", big)
    n.buf("a", big)
    n.buf("p", big)
    n.buf("acc", "B*max(4096, NC)", "f64")
    # conv1 (k11 s4 p2) -> C1, pool -> P1, conv2 (same) -> P1, pool -> P2, conv3-5 -> P2, pool -> P3 = 6
    conv_bias_act(n, "x", cv[0][0], cv[0][1], "a", "t", "B", 3, 96, "H", "W", "C1H", "C1W", 11, 4, 2, cc=1)
    n.maxpool("a", "p", "B*96", "C1H", "C1W", "P1H", "P1W", 3, 2)
    conv_bias_act(n, "p", cv[1][0], cv[1][1], "a", "t", "B", 96, 256, "P1H", "P1W", "P1H", "P1W", 5, 1, 2, cc=1)
    n.maxpool("a", "p", "B*256", "P1H", "P1W", "P2H", "P2W", 3, 2)
    conv_bias_act(n, "p", cv[2][0], cv[2][1], "a", "t", "B", 256, 384, "P2H", "P2W", "P2H", "P2W", 3, 1, 1, cc=1)
    conv_bias_act(n, "a", cv[3][0], cv[3][1], "p", "t", "B", 384, 384, "P2H", "P2W", "P2H", "P2W", 3, 1, 1, cc=1)
    conv_bias_act(n, "p", cv[4][0], cv[4][1], "a", "t", "B", 384, 256, "P2H", "P2W", "P2H", "P2W", 3, 1, 1, cc=1)
    n.maxpool("a", "p", "B*256", "P2H", "P2W", 6, 6, 3, 2)
    n.linear("p", f1w, f1b, "a", "B", 4096, 9216, "L3_RELU")
    n.linear("a", f2w, f2b, "t", "B", 4096, 4096, "L3_RELU")
    n.linear("t", f3w, f3b, "y", "B", "NC", 4096)
    n.notes += ["Five convolutions (conv2d_ref with CC = 1: conv1's 11x11 stride-4 tile fits shared memory",
                "only so), bias and ReLU in double, three 3x3 stride-2 max pools; three Linear layers."]
    hs = [h for h in range(200, 300) if sizes(h, [(11, 4, 2), (3, 2, 0), (3, 2, 0), (3, 2, 0)])[-1] == 6]
    assert hs == list(range(hs[0], hs[-1] + 1))
    derived = {}
    for d in ("H", "W"):
        derived["C1" + d] = "(%s - 7)/4 + 1" % d
        derived["P1" + d] = "(C1%s - 3)/2 + 1" % d
        derived["P2" + d] = "(P1%s - 3)/2 + 1" % d
    n.manifest = {
        "description": "KernelBench level 3, problem 5 (5_AlexNet): AlexNet on x (B, 3, H, W): Conv2d(3, 96, 11, "
                       "stride 4, padding 2), ReLU, max pool 3 stride 2, Conv2d(96, 256, 5, padding 2), ReLU, max "
                       "pool 3/2, Conv2d(256, 384, 3, padding 1), ReLU, Conv2d(384, 384, 3, padding 1), ReLU, "
                       "Conv2d(384, 256, 3, padding 1), ReLU, max pool 3/2 (to 6x6), flatten to 9216, "
                       "Linear(9216, 4096), ReLU, Dropout(0), Linear(4096, 4096), ReLU, Dropout(0), "
                       "Linear(4096, NC); KernelBench's sizes B = 1024, H = W = 224, NC = 1000 (H and W from 223 to "
                       "254 keep the last pool 6x6). " + COMMON +
                       X_NOTE + "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "num_classes": "NC"}, "init": ["NC"], "forward": ["x"]},
        "dims": {"default": {"B": 1024, "H": 224, "W": 224, "NC": 1000},
                 "small": {"B": 1, "H": 224, "W": 224, "NC": 3},
                 "alt": [{"B": 3, "H": 225, "W": 239, "NC": 1}, {"B": 2, "H": 226, "W": 223, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 6}, "H": {"min": hs[0], "max": hs[-1]},
                            "W": {"min": hs[0], "max": hs[-1]},
                            "NC": {"min": 1, "max": 1000}},
                   "require": ["(P2H - 3)/2 + 1 == 6", "(P2W - 3)/2 + 1 == 6"],
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 6 and every image size the 6x6 flatten admits (%d-%d), any class "
                          "count: the convolution and product tiles are masked at every edge; at most 3e10 "
                          "flops a draw (the weights alone are 230 MB)" % (hs[0], hs[-1])},
        "values": values(64, CONV_STRUCT_WHY % 64),
        "tolerance": cnn_tolerance("Five convolutions (up to 3456 terms) and three Linear layers (up to 9216)"),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": "2*B*(96*C1H*C1W*363 + 256*P1H*P1W*2400 + 384*P2H*P2W*2304 + 384*P2H*P2W*3456 + "
                 "256*P2H*P2W*3456 + 9216*4096 + 4096*4096 + 4096*NC)",
    }
    return n


def vgg(num, name, kb_name, title, cfg):
    n = Net(num, name, kb_name, title)
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    big = "B*64*H*W"
    n.buf("t", big)
    n.buf("a", big)
    n.buf("b", big)
    n.buf("acc", "B*max(4096, NC)", "f64")
    idx, ci, cur, stage_in = 0, 3, "x", ("H", "W")
    free = ["a", "b"]
    flops, layers = [], 0
    for s, stage in enumerate(cfg):
        h, w = stage_in
        for co in stage:
            wv, bv = n.conv_views("f%d" % idx, co, ci, 3, "features.%d" % idx)
            dst = free[0] if free[0] != cur else free[1]
            conv_bias_act(n, cur, wv, bv, dst, "t", "B", ci, co, h, w, h, w, 3, 1, 1)
            flops.append("%d*%s*%s" % (co * ci * 9, h, w))
            cur, ci, idx, layers = dst, co, idx + 2, layers + 1
        oh, ow = "H%d" % (s + 1), "W%d" % (s + 1)
        dst = free[0] if free[0] != cur else free[1]
        n.maxpool(cur, dst, "B*%d" % ci, h, w, oh, ow, 2, 2)
        cur, idx, stage_in = dst, idx + 1, (oh, ow)
    f1w, f1b = n.linear_views("fc1", 4096, 25088, "classifier.0")
    f2w, f2b = n.linear_views("fc2", 4096, 4096, "classifier.3")
    f3w, f3b = n.linear_views("fc3", "NC", 4096, "classifier.6")
    other = "a" if cur == "b" else "b"
    n.linear(cur, f1w, f1b, other, "B", 4096, 25088, "L3_RELU")
    n.linear(other, f2w, f2b, "t", "B", 4096, 4096, "L3_RELU")
    n.linear("t", f3w, f3b, "y", "B", "NC", 4096)
    n.notes += ["%d 3x3 convolutions (conv2d_ref), bias and ReLU in double, five 2x2 max pools; three Linear" % layers,
                "layers (FP64 tensor-core products); activations ping-pong between two buffers."]
    derived = {}
    for d in ("H", "W"):
        prev = d
        for s in range(5):
            derived["%s%d" % (d, s + 1)] = "%s/2" % prev
            prev = "%s%d" % (d, s + 1)
    convs = " ".join("[%s]" % ", ".join(str(c) for c in st) for st in cfg)
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): %s on x (B, 3, H, W): five blocks of 3x3 "
                       "convolutions (padding 1, with bias) each followed by ReLU, channels per block %s, each "
                       "block ending in a 2x2 max pool (stride 2, floor), then flatten to 512*7*7 = 25088, "
                       "Linear(25088, 4096), ReLU, Dropout(0), Linear(4096, 4096), ReLU, Dropout(0), "
                       "Linear(4096, NC); KernelBench's sizes B = 10, H = W = 224, NC = 1000 (H and W from 224 "
                       "to 255 keep the last map 7x7). " % (num, kb_name, title, convs) + COMMON + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "num_classes": "NC"}, "init": ["NC"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "H": 224, "W": 224, "NC": 1000},
                 "small": {"B": 1, "H": 224, "W": 224, "NC": 3},
                 "alt": [{"B": 2, "H": 231, "W": 255, "NC": 1}, {"B": 1, "H": 255, "W": 224, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 3}, "H": {"min": 224, "max": 255},
                            "W": {"min": 224, "max": 255}, "NC": {"min": 1, "max": 1000}},
                   "require": ["H5 == 7", "W5 == 7"],
                   "max_bytes": 1073741824, "max_flops": 1.5e11,
                   "why": "batches of 1 to 3 (each image is ~%d GFLOP) and every image size the 7x7 flatten "
                          "admits (224-255: odd maps from the first pool on, the floor of each pool), any class "
                          "count; the convolution and product tiles are masked at every edge"
                          % (16 if layers == 13 else 20)},
        "values": values(64, CONV_STRUCT_WHY % 64),
        "tolerance": cnn_tolerance("%d convolutions (up to 4608 terms) and three Linear layers (up to 25088)" % layers),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": "2*B*(%s + 25088*4096 + 4096*4096 + 4096*NC)" % " + ".join(flops),
    }
    return n


def p011():
    return vgg(11, "vgg16", "11_VGG16", "VGG16",
               [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]])


def p012():
    return vgg(12, "vgg19", "12_VGG19", "VGG19",
               [[64, 64], [128, 128], [256, 256, 256, 256], [512, 512, 512, 512], [512, 512, 512, 512]])


SPECS += [p004, p005, p011, p012]


# ---------------------------------------------------------------- residual networks

def basic_block(n, pre, torch, x, y, bufs, B, CI, CO, H, W, OH, OW, S, downsample):
    """torchvision-style BasicBlock: conv3x3(S) BN ReLU conv3x3 BN (+ identity or 1x1(S) conv BN)
    ReLU. bufs: three scratch names other than x and y (t, u, d) of the block's largest size."""
    t, u, d = bufs
    w1 = n.conv_views(pre + "c1", CO, CI, 3, torch + ".conv1", bias=False)[0]
    g1, b1 = n.bn_views(pre + "bn1", CO, torch + ".bn1")
    w2 = n.conv_views(pre + "c2", CO, CO, 3, torch + ".conv2", bias=False)[0]
    g2, b2 = n.bn_views(pre + "bn2", CO, torch + ".bn2")
    if downsample:
        wd = n.conv_views(pre + "dc", CO, CI, 1, torch + ".downsample.0", bias=False)[0]
        gd, bd = n.bn_views(pre + "dbn", CO, torch + ".downsample.1")
    conv_bn(n, x, w1, g1, b1, u, t, B, CI, CO, H, W, OH, OW, 3, S, 1)
    if downsample:
        conv_bn(n, x, wd, gd, bd, d, t, B, CI, CO, H, W, OH, OW, 1, S, 0, act="L3_NONE")
    conv_bn(n, u, w2, g2, b2, y, t, B, CO, CO, OH, OW, OH, OW, 3, 1, 1, res=d if downsample else x)


def p008():
    n = Net(8, "resnet_basic_block", "8_ResNetBasicBlock", "ResNet basic block (with downsample)")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "CO", "OH", "OW"])
    for b in ("t", "u", "d"):
        n.buf(b, "B*CO*OH*OW")
    n.buf("stats", "2*CO", "f64")
    # the module's own names: conv1, bn1, conv2, bn2, downsample.0/1
    w1 = n.conv_views("c1", "CO", "CI", 3, "conv1", bias=False)[0]
    g1, b1 = n.bn_views("bn1", "CO", "bn1")
    w2 = n.conv_views("c2", "CO", "CO", 3, "conv2", bias=False)[0]
    g2, b2 = n.bn_views("bn2", "CO", "bn2")
    wd = n.conv_views("dc", "CO", "CI", 1, "downsample.0", bias=False)[0]
    gd, bd = n.bn_views("dbn", "CO", "downsample.1")
    conv_bn(n, "x", w1, g1, b1, "u", "t", "B", "CI", "CO", "H", "W", "OH", "OW", 3, "S", 1)
    conv_bn(n, "x", wd, gd, bd, "d", "t", "B", "CI", "CO", "H", "W", "OH", "OW", 1, "S", 0, act="L3_NONE")
    conv_bn(n, "u", w2, g2, b2, "y", "t", "B", "CO", "CO", "OH", "OW", "OH", "OW", 3, 1, 1, res="d")
    n.notes += ["conv3x3(S) BN ReLU, the 1x1(S) downsample conv BN, conv3x3 BN + downsample, ReLU; BatchNorm",
                "in training mode (batch statistics in double), residual and ReLU in double, rounded once."]
    n.manifest = {
        "description": "KernelBench level 3, problem 8 (8_ResNetBasicBlock): a ResNet basic block on x (B, CI, H, W): "
                       "Conv2d(CI, CO, 3, stride S, padding 1, no bias), BatchNorm2d, ReLU, Conv2d(CO, CO, 3, "
                       "padding 1, no bias), BatchNorm2d, plus the downsample branch Conv2d(CI, CO, 1, stride S, "
                       "no bias), BatchNorm2d (KernelBench's module always has it), then ReLU; output (B, CO, OH, "
                       "OW), OH = (H - 1)/S + 1. KernelBench's sizes B = 10, CI = 3, CO = 64, S = 1, H = W = 224. "
                       + COMMON + X_NOTE + "Output y (B, CO, OH, OW).",
        "torch_model": {"globals": {"batch_size": "B", "in_channels": "CI", "out_channels": "CO", "stride": "S"},
                        "init": ["CI", "CO", "S"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 3, "CO": 64, "S": 1, "H": 224, "W": 224},
                 "small": {"B": 2, "CI": 3, "CO": 5, "S": 1, "H": 9, "W": 7},
                 "alt": [{"B": 3, "CI": 5, "CO": 17, "S": 2, "H": 33, "W": 30},
                         {"B": 1, "CI": 1, "CO": 33, "S": 1, "H": 67, "W": 1}]},
        "derived": {"OH": "(H - 1)/S + 1", "OW": "(W - 1)/S + 1"},
        "hidden": {"dims": {"B": {"min": 1, "max": 8}, "CI": {"min": 1, "max": 48}, "CO": {"min": 1, "max": 96},
                            "S": {"values": [1, 2]}, "H": {"min": 1, "max": 96}, "W": {"min": 1, "max": 96}},
                   "require": [bn_require("B*OH*OW")],
                   "why": "any batch, channel counts (off the conv2d_ref's 16-channel blocks) and image sizes "
                          "down to 1 (the 3x3 convolution's padding), strides 1 and 2 as ResNet uses; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("Three convolutions (up to 9*CO terms) with training-mode BatchNorm"),
        "bytes": "4*(B*CI*H*W + %s + B*CO*OH*OW)" % n.params_numel(),
        "flops": "2*B*CO*OH*OW*(9*CI + 9*CO + CI) + 10*B*CO*OH*OW",
    }
    check_bn_values(n, "B*OH*OW")
    return n


def p009():
    n = Net(9, "resnet18", "9_ResNet18", "ResNet-18")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    big = "B*64*C1H*C1W"
    for b in ("a", "b", "t", "u", "d"):
        n.buf(b, big)
    n.buf("stats", "2*512", "f64")
    n.buf("acc", "B*NC", "f64")
    w1 = n.conv_views("conv1", 64, 3, 7, "conv1", bias=False)[0]
    g1, b1 = n.bn_views("bn1", 64, "bn1")
    conv_bn(n, "x", w1, g1, b1, "a", "t", "B", 3, 64, "H", "W", "C1H", "C1W", 7, 2, 3)
    n.maxpool("a", "b", "B*64", "C1H", "C1W", "L1H", "L1W", 3, 2, 1)
    cur, other = "b", "a"
    ci, hw = 64, ("L1H", "L1W")
    for layer, co in enumerate([64, 128, 256, 512], 1):
        for blk in range(2):
            s = 2 if layer > 1 and blk == 0 else 1
            oh, ow = ("L%dH" % layer, "L%dW" % layer)
            basic_block(n, "l%d_%d_" % (layer, blk), "layer%d.%d" % (layer, blk), cur, other, ("t", "u", "d"),
                        "B", ci, co, hw[0], hw[1], oh, ow, s, s != 1 or ci != co)
            cur, other, ci, hw = other, cur, co, (oh, ow)
    n.row_mean(cur, other, "B*512", "L4H*L4W")
    fw, fb = n.linear_views("fc", "NC", 512, "fc")
    n.linear(other, fw, fb, "y", "B", "NC", 512)
    n.notes += ["conv1 7x7/2 BN ReLU, max pool 3/2 (padding 1), four stages of two basic blocks (the first of",
                "stages 2-4 with stride 2 and a 1x1 downsample), global average pool, Linear; BatchNorm in",
                "training mode (batch statistics in double), residuals and ReLU in double."]
    derived = {}
    for d in ("H", "W"):
        derived["C1" + d] = "(%s - 1)/2 + 1" % d
        derived["L1" + d] = "(C1%s - 1)/2 + 1" % d
        derived["L2" + d] = "(L1%s - 1)/2 + 1" % d
        derived["L3" + d] = "(L2%s - 1)/2 + 1" % d
        derived["L4" + d] = "(L3%s - 1)/2 + 1" % d
    n.manifest = {
        "description": "KernelBench level 3, problem 9 (9_ResNet18): ResNet-18 on x (B, 3, H, W): Conv2d(3, 64, 7, "
                       "stride 2, padding 3, no bias), BatchNorm2d, ReLU, MaxPool2d(3, stride 2, padding 1), four "
                       "stages of two basic blocks (64, 128, 256, 512 channels; each block conv3x3 BN ReLU conv3x3 "
                       "BN, plus the identity or, in the first block of stages 2-4, a stride-2 1x1 conv BN "
                       "downsample, then ReLU), adaptive average pool to 1x1, Linear(512, NC). Every halving is "
                       "(n - 1)/2 + 1. KernelBench's sizes B = 2, H = W = 224, NC = 1000. " + COMMON + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "num_classes": "NC"}, "init": ["NC"], "forward": ["x"]},
        "dims": {"default": {"B": 2, "H": 224, "W": 224, "NC": 1000},
                 "small": {"B": 4, "H": 64, "W": 64, "NC": 3},
                 "alt": [{"B": 3, "H": 67, "W": 45, "NC": 1}, {"B": 1, "H": 97, "W": 129, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "H": {"min": 17, "max": 256},
                            "W": {"min": 17, "max": 256}, "NC": {"min": 1, "max": 1000}},
                   "require": [bn_require("B*L4H*L4W")],
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 4 and images of 17 to 256 (odd sizes halve with rounding up at every "
                          "stride-2 step; 17 and above keep the last stage at least 1x1), any class count; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("Twenty convolutions with training-mode BatchNorm and a Linear layer"),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": "2*B*(64*C1H*C1W*147 + 4*64*L1H*L1W*576 + 128*L2H*L2W*(576 + 3*1152 + 64) + "
                 "256*L3H*L3W*(1152 + 3*2304 + 128) + 512*L4H*L4W*(2304 + 3*4608 + 256) + 512*NC)",
    }
    check_bn_values(n, "B*L4H*L4W")
    return n


SPECS += [p008, p009]


# ---------------------------------------------------------------- recurrent networks (33-42)

RNN_STRUCT_WHY = ("the scaled inputs, states and weight views (per-row and per-column scales up to 8x) push "
                  "the gates' pre-activations further into the sigmoid and tanh tails, where the outputs "
                  "are flat, and the recurrence's float32 rounding relative to the state stays near the "
                  "unscaled runs'; atol x%d for the input projections' sums that cancel (an estimate, to be "
                  "calibrated on the H100); no spikes: every state mixes every input element")


def recurrent(n, kind, mod, x, batch_first, D, h0, c0, hn=None, cn=None):
    """nn.LSTM / nn.GRU (kind "lstm" / "gru", module attribute mod) of L layers and D directions
    over x ([B, T, IN] batch-first, else [T, B, IN]), states h0 (and c0) [L*D, B, H]. The last
    layer's output sequence ends in seq[((L - 1) % 2)*T*B*D*H] (rows as x's, D*H columns). hn/cn:
    outputs [L*D, B, H] that get the final states. Views: per direction the first layer's W_ih,
    the other layers' W_ih stacked, and W_hh, b_ih, b_hh stacked over the L layers (PyTorch's
    RNN init: uniform(-1/sqrt(H), 1/sqrt(H)) for all)."""
    G = 4 if kind == "lstm" else 3
    step = "l3_lstm_step" if kind == "lstm" else "l3_gru_step"
    N = "T*B*%d*H" % D
    n.buf("seq", "2*" + N)
    n.buf("gx", "T*B*%d*H" % G, "f64")
    n.buf("hd", "2*B*H", "f64")
    if kind == "lstm":
        n.buf("cd", "B*H", "f64")
    sb, st = ("T", "1") if batch_first else ("1", "B")
    views = []
    for d in range(D):
        sfx, tsfx = ("", "") if d == 0 else ("_r", "_reverse")
        w0 = n.view("wih0" + sfx, ["%d*H" % G, "IN"], fan_in("H"), "%s.weight_ih_l0%s" % (mod, tsfx))
        ws = n.view("wih" + sfx, ["L-1", "%d*H" % G, "%d*H" % D], fan_in("H"), "%s.weight_ih_l{i+1}%s" % (mod, tsfx))
        wh = n.view("whh" + sfx, ["L", "%d*H" % G, "H"], fan_in("H"), "%s.weight_hh_l{i}%s" % (mod, tsfx))
        bi = n.view("bih" + sfx, ["L", "%d*H" % G], fan_in("H"), "%s.bias_ih_l{i}%s" % (mod, tsfx))
        bh = n.view("bhh" + sfx, ["L", "%d*H" % G], fan_in("H"), "%s.bias_hh_l{i}%s" % (mod, tsfx))
        views.append((w0, ws, wh, bi, bh))

    def layer(l, src, src_k, first):
        dst = "seq[(%s %% 2)*%s]" % (l, N)
        for d in range(D):
            w0, ws, wh, bi, bh = views[d]
            w = w0 if first else "%s[(%s - 1)*%d*H*%d*H]" % (ws, l, G, D)
            n.product(src, w, "gx", "T*B", "%d*H" % G, src_k)
            n.state_in("%s[(%s*%d + %d)*B*H]" % (h0, l, D, d), "hd", "B*H")
            if kind == "lstm":
                n.state_in("%s[(%s*%d + %d)*B*H]" % (c0, l, D, d), "cd", "B*H")
            tt = "t" if d == 0 else "T - 1 - t"
            with n.loop("t", 0, "T"):
                n.launch("%s<<<dim3(cdiv(H, 8), B), 256>>>(gx, %s[%s*%d*H*H], %s[%s*%d*H], %s[%s*%d*H], "
                         "hd[(t %% 2)*B*H], hd[((t + 1) %% 2)*B*H], %s%s, B, H, %s, %s, %s, %d*H, %d*H)"
                         % (step, wh, l, G, bi, l, G, bh, l, G, "cd, " if kind == "lstm" else "", dst,
                            tt, sb, st, D, d))
            if hn:
                n.state_out("hd[(T % 2)*B*H]", "%s[(%s*%d + %d)*B*H]" % (hn, l, D, d), "B*H")
            if cn:
                n.state_out("cd", "%s[(%s*%d + %d)*B*H]" % (cn, l, D, d), "B*H")

    layer("0", x, "IN", True)
    with n.loop("l", 1, "L"):
        layer("l", "seq[((l + 1) %% 2)*%s]" % N, "%d*H" % D, False)
    return "seq[((L - 1) %% 2)*%s]" % N


RNN_DIMS_WHY = ("any batch, sequence length, widths and depths: the step kernels guard every hidden unit "
                "(a warp each) and the input projections' 64x64 tiles are masked at every edge; T up to "
                "%d and L up to %d keep a run within %d launches of the 65536 allowed")


def lstm_problem(num, name, kb_name, title, ret, D):
    """KernelBench 35-38: nn.LSTM(IN, H, L, batch_first=True, bidirectional=D == 2) and
    fc = Linear(D*H, OUT); ret: "fc" (fc on the last step), "hn" or "cn" (state[0] / state[1])."""
    n = Net(num, name, kb_name, title)
    n.input("x", ["B", "T", "IN"])
    n.input("h0", ["L*%d" % D, "B", "H"])
    n.input("c0", ["L*%d" % D, "B", "H"])
    if ret == "fc":
        n.output("y", ["B", "OUT"])
    else:
        n.output(ret, ["L*%d" % D, "B", "H"])
    last = recurrent(n, "lstm", "lstm", "x", True, D, "h0", "c0",
                     hn="hn" if ret == "hn" else None, cn="cn" if ret == "cn" else None)
    fw, fb = n.linear_views("fc", "OUT", "%d*H" % D, "fc")
    if ret == "fc":
        n.buf("last", "B*%d*H" % D)
        n.buf("acc", "B*OUT", "f64")
        n.copy_rows(last.replace("[", "[(T - 1)*%d*H + " % D, 1), "last", "B", "%d*H" % D, "T*%d*H" % D)
        n.linear("last", fw, fb, "y", "B", "OUT", "%d*H" % D)
    n.notes += ["Each layer and direction: the input projection for all steps (FP64 tensor cores), then one",
                "l3_lstm_step launch per time step (state in double); layers 1..L-1 run in a @for loop."]
    what = {"fc": "fc(out[:, -1, :]) (B, OUT): the Linear on the last time step's output of the last layer",
            "hn": "state[0] = h_n (L%s, B, H), the final hidden state of every layer%s" % ("*2" if D == 2 else "", " and direction" if D == 2 else ""),
            "cn": "state[1] = c_n (L, B, H), the final cell state of every layer"}[ret]
    fwd = '"x", "h0", "c0"'
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): nn.LSTM(IN, H, num_layers=L, batch_first=True%s) on x "
                       "(B, T, IN) with initial states h0 and c0 (L%s, B, H), then fc = Linear(%sH, OUT); the "
                       "output is %s. PyTorch's LSTM: gates i, f, g, o from x_t W_ih^T + b_ih + h W_hh^T + b_hh, "
                       "c = f c + i g, h = o tanh(c)%s. KernelBench's sizes B = 10, T = 512, IN = 128, H = 256, L "
                       "= 6, OUT = 10. %s" % (num, kb_name, ", bidirectional=True" if D == 2 else "",
                                              "*2" if D == 2 else "", "2*" if D == 2 else "", what,
                                              "; the reverse direction runs t = T-1 .. 0 and its outputs "
                                              "follow the forward ones in each step's 2H" if D == 2 else "",
                                              "KernelBench draws h0 and c0 inside forward with torch.randn when they are not given (35) or as torch.rand inputs: here they are inputs, N(0, 1). " if True else "")
                       + COMMON.replace("Linear and Conv weights", "LSTM (uniform(-1/sqrt(H), 1/sqrt(H)) for every weight and bias), Linear and Conv weights") + X_NOTE +
                       ("Output y (B, OUT)." if ret == "fc" else "Output %s (L%s, B, H)." % (ret, "*2" if D == 2 else "")),
        "torch_model": {"globals": {"batch_size": "B", "sequence_length": "T", "input_size": "IN",
                                    "hidden_size": "H", "num_layers": "L", "output_size": "OUT"},
                        "init": ["IN", "H", "L", "OUT", "0.0"], "forward": ["x", "h0", "c0"]},
        "dims": {"default": {"B": 10, "T": 512, "IN": 128, "H": 256, "L": 6, "OUT": 10},
                 "small": {"B": 2, "T": 5, "IN": 3, "H": 7, "L": 2, "OUT": 3},
                 "alt": [{"B": 3, "T": 17, "IN": 33, "H": 65, "L": 3, "OUT": 1},
                         {"B": 1, "T": 1, "IN": 1, "H": 129, "L": 1, "OUT": 7}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 16}, "T": {"min": 1, "max": 96}, "IN": {"min": 1, "max": 160},
                            "H": {"min": 1, "max": 300}, "L": {"min": 1, "max": 7}, "OUT": {"min": 1, "max": 64}},
                   "why": RNN_DIMS_WHY % (96, 7, 7 * D * 101)},
        "values": values(64, RNN_STRUCT_WHY % 64, large_why="the gates saturate (sigmoid, tanh): larger inputs "
                         "move them into the flat tails, where the outputs stop depending on magnitude; the "
                         "structured runs scale rows and columns"),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. The states are bounded (|h| < 1) and the "
                             "recurrence contracts (forget gates below 1), so float32 rounding does not grow "
                             "over the %s steps; PyTorch's float32 LSTM errs by ~1e-6 on the states (an "
                             "estimate, to be calibrated on the H100), inside 1e-4" % "512"},
        "bytes": "4*(B*T*IN + %d*L*B*H + %s + %s)" % (2 * D, n.params_numel(),
                                                     "B*OUT" if ret == "fc" else "%d*L*B*H" % D),
        "flops": "2*%d*T*B*4*H*(IN + (L - 1)*%d*H + L*H)%s" % (D, D, " + 2*B*%d*H*OUT" % D if ret == "fc" else ""),
    }
    return n


def gru_problem(num, name, kb_name, title, ret, D):
    """KernelBench 39-42: nn.GRU(IN, H, L, bias, batch_first=False, bidirectional=D == 2);
    ret "out" (the last layer's output sequence) or "hn"."""
    n = Net(num, name, kb_name, title)
    n.input("x", ["T", "B", "IN"])
    n.input("h0", ["L*%d" % D, "B", "H"])
    if ret == "out":
        n.output("y", ["T", "B", "%d*H" % D])
    else:
        n.output("hn", ["L*%d" % D, "B", "H"])
    last = recurrent(n, "gru", "gru", "x", False, D, "h0", None, hn="hn" if ret == "hn" else None)
    if ret == "out":
        n.copy(last, "y", "T*B*%d*H" % D)
    n.notes += ["Each layer and direction: the input projection for all steps (FP64 tensor cores), then one",
                "l3_gru_step launch per time step (state in double); layers 1..L-1 run in a @for loop."]
    what = ("output (T, B, %sH): the last layer's h at every step%s" % ("2*" if D == 2 else "", ", forward then reverse" if D == 2 else "")
            if ret == "out" else "h_n (L%s, B, H): the final hidden state of every layer%s" % ("*2" if D == 2 else "", " and direction" if D == 2 else ""))
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): nn.GRU(IN, H, num_layers=L, bias=True, "
                       "batch_first=False%s) on x (T, B, IN) with initial state h0 (L%s, B, H); the output is %s. "
                       "PyTorch's GRU: r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + "
                       "b_in + r (W_hn h + b_hn)), h = (1 - z) n + z h%s. KernelBench's sizes T = 512, B = 10, IN = "
                       "128, H = 256, L = 6. KernelBench draws h0 with torch.rand: here it is an input, N(0, 1). "
                       % (num, kb_name, ", bidirectional=True" if D == 2 else "", "*2" if D == 2 else "", what,
                          "; the reverse direction runs t = T-1 .. 0" if D == 2 else "")
                       + COMMON.replace("Linear and Conv weights", "GRU (uniform(-1/sqrt(H), 1/sqrt(H)) for every weight and bias), Linear and Conv weights") + X_NOTE +
                       ("Output y (T, B, %sH)." % ("2*" if D == 2 else "") if ret == "out" else "Output hn (L%s, B, H)." % ("*2" if D == 2 else "")),
        "torch_model": {"globals": {"batch_size": "B", "seq_len": "T", "input_size": "IN", "hidden_size": "H",
                                    "num_layers": "L"},
                        "init": ["IN", "H", "L"], "forward": ["x", "h0"]},
        "dims": {"default": {"T": 512, "B": 10, "IN": 128, "H": 256, "L": 6},
                 "small": {"T": 5, "B": 2, "IN": 3, "H": 7, "L": 2},
                 "alt": [{"T": 17, "B": 3, "IN": 33, "H": 65, "L": 3},
                         {"T": 1, "B": 1, "IN": 1, "H": 129, "L": 1}]},
        "hidden": {"dims": {"T": {"min": 1, "max": 96}, "B": {"min": 1, "max": 16}, "IN": {"min": 1, "max": 160},
                            "H": {"min": 1, "max": 300}, "L": {"min": 1, "max": 7}},
                   "why": RNN_DIMS_WHY % (96, 7, 7 * D * 101)},
        "values": values(64, RNN_STRUCT_WHY % 64, large_why="the gates saturate (sigmoid, tanh): larger inputs "
                         "move them into the flat tails, where the outputs stop depending on magnitude; the "
                         "structured runs scale rows and columns"),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. The states are bounded (|h| < 1 after the first "
                             "step) and the update interpolates, so float32 rounding does not grow over the 512 "
                             "steps; PyTorch's float32 GRU errs by ~1e-6 on the states (an estimate, to be "
                             "calibrated on the H100), inside 1e-4"},
        "bytes": "4*(T*B*IN + %d*L*B*H + %s + %s)" % (D, n.params_numel(), "T*B*%d*H" % D if ret == "out" else "%d*L*B*H" % D),
        "flops": "2*%d*T*B*3*H*(IN + (L - 1)*%d*H + L*H)" % (D, D),
    }
    return n


def p035():
    return lstm_problem(35, "lstm", "35_LSTM", "LSTM, Linear on the last step", "fc", 1)


def p036():
    return lstm_problem(36, "lstm_hn", "36_LSTMHn", "LSTM, final hidden states", "hn", 1)


def p037():
    return lstm_problem(37, "lstm_cn", "37_LSTMCn", "LSTM, final cell states", "cn", 1)


def p038():
    return lstm_problem(38, "lstm_bidirectional", "38_LSTMBidirectional", "Bidirectional LSTM, Linear on the last step", "fc", 2)


def p039():
    return gru_problem(39, "gru", "39_GRU", "GRU, output sequence", "out", 1)


def p040():
    return gru_problem(40, "gru_hidden", "40_GRUHidden", "GRU, final hidden states", "hn", 1)


def p041():
    return gru_problem(41, "gru_bidirectional", "41_GRUBidirectional", "Bidirectional GRU, output sequence", "out", 2)


def p042():
    return gru_problem(42, "gru_bidirectional_hidden", "42_GRUBidirectionalHidden", "Bidirectional GRU, final hidden states", "hn", 2)


SPECS += [p035, p036, p037, p038, p039, p040, p041, p042]


def vanilla_rnn(num, name, kb_name, title, seq):
    """KernelBench 33 (one step: x (B, IN), output h2o(tanh(i2h(cat(x, h0))))) and 34 (T steps over
    x (T, B, IN), the outputs of every step stacked)."""
    n = Net(num, name, kb_name, title)
    n.input("x", ["T", "B", "IN"] if seq else ["B", "IN"])
    n.input("h0", ["B", "H"])
    n.output("y", ["T", "B", "OUT"] if seq else ["B", "OUT"])
    iw, ib = n.linear_views("i2h", "H", "IN + H", "i2h")
    ow, ob = n.linear_views("h2o", "OUT", "H", "h2o")
    n.buf("comb", "B*(IN + H)")
    n.buf("hid", "B*H")
    n.buf("acc", "B*max(H, OUT)", "f64")
    if seq:
        n.copy("h0", "hid", "B*H")
        with n.loop("t", 0, "T"):
            n.copy_channels("x[t*B*IN]", "comb", "B", "IN", 1, "IN + H", 0)
            n.copy_channels("hid", "comb", "B", "H", 1, "IN + H", "IN")
            n.linear("comb", iw, ib, "hid", "B", "H", "IN + H", "L3_TANH")
            n.linear("hid", ow, ob, "y[t*B*OUT]", "B", "OUT", "H")
    else:
        n.copy_channels("x", "comb", "B", "IN", 1, "IN + H", 0)
        n.copy_channels("h0", "comb", "B", "H", 1, "IN + H", "IN")
        n.linear("comb", iw, ib, "hid", "B", "H", "IN + H", "L3_TANH")
        n.linear("hid", ow, ob, "y", "B", "OUT", "H")
    n.notes += ["cat(x_t, h) into one buffer, i2h (FP64 tensor cores) with bias and tanh in double, h2o%s."
                % (", once per time step in a @for loop" if seq else "")]
    d = {"B": 8, "T": 256, "IN": 1024, "H": 256, "OUT": 128} if seq else {"B": 256, "IN": 16384, "H": 16384, "OUT": 8192}
    small = {"B": 2, "T": 3, "IN": 5, "H": 7, "OUT": 3} if seq else {"B": 2, "IN": 5, "H": 7, "OUT": 3}
    alt = ([{"B": 3, "T": 17, "IN": 65, "H": 33, "OUT": 1}, {"B": 1, "T": 1, "IN": 1, "H": 129, "OUT": 7}] if seq else
           [{"B": 3, "IN": 257, "H": 65, "OUT": 1}, {"B": 1, "IN": 1, "H": 4097, "OUT": 33}])
    hid = ({"B": {"min": 1, "max": 16}, "T": {"min": 1, "max": 128}, "IN": {"min": 1, "max": 1200},
            "H": {"min": 1, "max": 320}, "OUT": {"min": 1, "max": 160}} if seq else
           {"B": {"min": 1, "max": 300}, "IN": {"min": 1, "max": 4096}, "H": {"min": 1, "max": 4096},
            "OUT": {"min": 1, "max": 2048}})
    kb_sizes = ("B = 8, T = 256, IN = 1024, H = 256, OUT = 128" if seq else
                "B = 256, IN = 16384, H = 16384, OUT = 8192")
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): a vanilla RNN cell, i2h = Linear(IN + H, H), h2o = "
                       "Linear(H, OUT): %s. KernelBench's sizes %s. The initial hidden state h0 (B, H) is an input, "
                       "N(0, 1) (KernelBench passes torch.rand). " % (
                           num, kb_name,
                           "for t in 0..T-1, h = tanh(i2h(cat(x[t], h))), y[t] = h2o(h), starting from h = h0; the "
                           "output stacks y over t" if seq else
                           "h = tanh(i2h(cat(x, h0))) on x (B, IN), output h2o(h) (the module keeps h as its "
                           "state: a side effect not checked)", kb_sizes) + COMMON + X_NOTE +
                       ("Output y (T, B, OUT)." if seq else "Output y (B, OUT)."),
        "torch_model": {"globals": {"batch_size": "B", "input_size": "IN", "hidden_size": "H", "output_size": "OUT"},
                        "init": ["IN", "H", "OUT"], "forward": ["x", "h0"]},
        "dims": {"default": d, "small": small, "alt": alt},
        "hidden": {"dims": hid,
                   "why": "any batch, widths%s: the concatenation and the 64x64 product tiles are masked at every "
                          "edge (odd, prime and unit widths)" % (" and lengths (6 launches a step)" if seq else "")},
        "values": values(64, MLP_STRUCT_WHY % 64, large_why="tanh saturates and the rest is linear: larger "
                         "inputs only move the hidden state into the flat tails; the structured runs scale rows and columns"),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. Each step's sums have IN + H terms at PyTorch's init "
                             "and the state is bounded by tanh, so float32 rounding (~1e-6 relative a step) does not "
                             "grow over the steps; TF32 products (~5e-4 a product) fail"},
        "bytes": "4*(%s + B*H + %s + %s)" % ("T*B*IN" if seq else "B*IN", n.params_numel(), "T*B*OUT" if seq else "B*OUT"),
        "flops": "2*%sB*((IN + H)*H + H*OUT)" % ("T*" if seq else ""),
    }
    return n


def p033():
    return vanilla_rnn(33, "vanilla_rnn", "33_VanillaRNN", "Vanilla RNN cell (one step)", False)


def p034():
    return vanilla_rnn(34, "vanilla_rnn_hidden", "34_VanillaRNNHidden", "Vanilla RNN over a sequence", True)


SPECS += [p033, p034]


# ---------------------------------------------------------------- attention (43, 44, 50)

ATT_STRUCT_WHY = ("the scaled input and weight views (per-row and per-column scales up to 8x) scale q, k and v "
                  "through c_attn, so the scores grow by up to 64x per factor and the softmax sharpens; float32 "
                  "rounding of the products and of the softmax's exponentials grows with them, and the "
                  "projections' sums cancel; atol x%d (an estimate, to be calibrated on the H100); no spikes: "
                  "every output mixes a whole row of keys")
ATT_LARGE_WHY = ("the structured runs already multiply the scores by up to 64x per factor through the scaled "
                 "weights (the softmax's max subtraction is tested there); a uniform scale of every input "
                 "would scale the scores by its fourth power")


def attention_views(n, pre, torch):
    w1, b1 = n.linear_views(pre + "c_attn", "3*C", "C", torch + "c_attn")
    w2, b2 = n.linear_views(pre + "c_proj", "C", "C", torch + "c_proj")
    return w1, b1, w2, b2


def attention_bufs(n):
    n.buf("qkv", "B*T*3*C")
    for b in ("q", "k", "v", "ya"):
        n.buf(b, "B*T*C")
    n.buf("s", "B*NH*T*T", "f64")
    n.buf("yh", "B*T*C", "f64")
    n.buf("acc", "B*T*4*C", "f64")


ATT_DIMS = {"default": {"B": 128, "T": 512, "C": 768, "NH": 8},
            "small": {"B": 2, "T": 5, "C": 6, "NH": 2},
            "alt": [{"B": 3, "T": 65, "C": 36, "NH": 3}, {"B": 1, "T": 1, "C": 7, "NH": 7}]}
ATT_HIDDEN = {"dims": {"B": {"min": 1, "max": 8}, "T": {"min": 1, "max": 300}, "C": {"min": 1, "max": 384},
                       "NH": {"divisor_of": "C"}},
              "require": ["NH <= 48"],
              "why": "any batch, length (1 to 300, within max_seqlen 1024) and width, every head count up to 48 "
                     "that divides it (head sizes from 1 to C; the double score scratch grows with the heads): the score and value products' 64x64 tiles are masked "
                     "at every edge and each causal row is a warp's; at most 2e10 flops a draw"}


def p043():
    n = Net(43, "min_gpt_causal_attention", "43_MinGPTCausalAttention", "minGPT causal self-attention")
    n.input("x", ["B", "T", "C"])
    n.output("y", ["B", "T", "C"])
    w1, b1, w2, b2 = attention_views(n, "", "")
    attention_bufs(n)
    n.linear("x", w1, b1, "qkv", "B*T", "3*C", "C")
    n.causal_attention("qkv", "ya", "B", "T", "C", "NH")
    n.linear("ya", w2, b2, "y", "B*T", "C", "C")
    n.notes += ["c_attn (FP64 tensor cores), heads split, S = Q K^T / sqrt(HS) in double per (batch, head),",
                "causal softmax in double, P V in double, heads merged (rounded once), c_proj."]
    n.manifest = {
        "description": "KernelBench level 3, problem 43 (43_MinGPTCausalAttention): minGPT's causal self-attention "
                       "on x (B, T, C): q, k, v = c_attn(x) split in three (c_attn = Linear(C, 3C)), each viewed as "
                       "NH heads of HS = C/NH, att = softmax(q k^T / sqrt(HS)) with keys after the query masked "
                       "(-inf), y = att v with the heads side by side, then c_proj = Linear(C, C); dropout p = 0. "
                       "KernelBench's sizes B = 128, T = 512, C = 768, NH = 8 (max_seqlen 1024: T stays at most "
                       "1024). " + COMMON + X_NOTE + "Output y (B, T, C).",
        "torch_model": {"globals": {"batch_size": "B", "seq_len": "T", "n_embd": "C", "n_head": "NH"},
                        "init": ["C", "NH", "0.0", "0.0", "1024"], "forward": ["x"]},
        "dims": ATT_DIMS, "hidden": ATT_HIDDEN,
        "values": values(64, ATT_STRUCT_WHY % 64, large_why=ATT_LARGE_WHY),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. The projections sum C = 768 products and the "
                             "attention T = 512 weighted values at PyTorch's init (outputs O(0.1)); float32 "
                             "products, softmax and sums err by ~1e-6, inside 1e-4; TF32 products fail"},
        "bytes": "4*(B*T*C + %s + B*T*C)" % n.params_numel(),
        "flops": "2*B*T*C*4*C + 4*B*T*T*C",
    }
    return n


def p044():
    n = Net(44, "mini_gpt_block", "44_MiniGPTBlock", "minGPT transformer block")
    n.input("x", ["B", "T", "C"])
    n.output("y", ["B", "T", "C"])
    g1, e1 = n.view("ln1_g", ["C"], {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}, "ln_1.weight"), \
        n.view("ln1_b", ["C"], {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}}, "ln_1.bias")
    w1, b1, w2, b2 = attention_views(n, "attn_", "attn.")
    g2 = n.view("ln2_g", ["C"], {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}, "ln_2.weight")
    e2 = n.view("ln2_b", ["C"], {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}}, "ln_2.bias")
    fw, fb = n.linear_views("fc", "4*C", "C", "mlp.c_fc")
    pw, pb = n.linear_views("proj", "C", "4*C", "mlp.c_proj")
    attention_bufs(n)
    n.buf("h", "B*T*C")
    n.buf("x1", "B*T*C")
    n.buf("m", "B*T*4*C")
    n.layernorm("x", g1, e1, "h", "B*T", "C")
    n.linear("h", w1, b1, "qkv", "B*T", "3*C", "C")
    n.causal_attention("qkv", "ya", "B", "T", "C", "NH")
    n.linear("ya", w2, b2, "x1", "B*T", "C", "C", res="x")
    n.layernorm("x1", g2, e2, "h", "B*T", "C")
    n.linear("h", fw, fb, "m", "B*T", "4*C", "C", "L3_GELU_TANH")
    n.linear("m", pw, pb, "y", "B*T", "C", "4*C", res="x1")
    n.notes += ["ln_1 (double statistics), causal self-attention as in 043, residual in double; ln_2, c_fc with",
                "NewGELU (tanh form) in double, c_proj, residual in double."]
    n.manifest = {
        "description": "KernelBench level 3, problem 44 (44_MiniGPTBlock): a minGPT transformer block on x (B, T, "
                       "C): x = x + attn(ln_1(x)), x = x + mlp(ln_2(x)), with ln_1, ln_2 = LayerNorm(C) (eps 1e-5), "
                       "attn the causal self-attention of problem 43 (c_attn = Linear(C, 3C), NH heads, c_proj = "
                       "Linear(C, C)), mlp = c_proj(NewGELU(c_fc(.))) with c_fc = Linear(C, 4C), c_proj = "
                       "Linear(4C, C) and NewGELU(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); dropout "
                       "p = 0. KernelBench's sizes B = 128, T = 512, C = 768, NH = 8 (max_seqlen 1024). LayerNorm "
                       "weights are ones and biases zeros (varied by the checks). " + COMMON + X_NOTE +
                       "Output y (B, T, C).",
        "torch_model": {"globals": {"batch_size": "B", "seq_len": "T", "n_embd": "C", "n_head": "NH"},
                        "init": ["C", "NH", "0.0", "0.0", "1024"], "forward": ["x"]},
        "dims": ATT_DIMS, "hidden": ATT_HIDDEN,
        "values": values(64, ATT_STRUCT_WHY % 64, large_why=ATT_LARGE_WHY),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. LayerNorm keeps each sublayer's input O(1); the "
                             "products sum up to 4C = 3072 terms and the attention 512 weighted values, and the "
                             "residual path carries x (O(1)); float32 errs by ~1e-6 relative, inside 1e-4; TF32 "
                             "products fail"},
        "bytes": "4*(B*T*C + %s + B*T*C)" % n.params_numel(),
        "flops": "2*B*T*C*12*C + 4*B*T*T*C",
    }
    return n


def p050():
    n = Net(50, "relu_self_attention", "50_ReLUSelfAttention", "Causal self-attention with ReLU weights")
    n.input("x", ["B", "T", "C"])
    n.output("y", ["B", "T", "C"])
    w1, b1, w2, b2 = attention_views(n, "", "")
    attention_bufs(n)
    n.linear("x", w1, b1, "qkv", "B*T", "3*C", "C")
    n.causal_attention("qkv", "y", "B", "T", "C", "NH", kind=1)
    n.notes += ["c_attn (FP64 tensor cores), S = Q K^T / sqrt(HS) in double, ReLU of the causal scores, P V in",
                "double, heads merged (rounded once). c_proj is a parameter the forward never uses."]
    n.manifest = {
        "description": "KernelBench level 3, problem 50 (50_ReLUSelfAttention): causal self-attention with ReLU in "
                       "place of the softmax on x (B, T, C): q, k, v = c_attn(x) (Linear(C, 3C)), NH heads of HS = "
                       "C/NH, att = relu(q k^T / sqrt(HS)) with keys after the query masked (-inf, so 0), y = att v "
                       "with the heads side by side; no output projection (the module's c_proj is a parameter "
                       "forward does not use: its view is there, unread). KernelBench's sizes B = 16, T = 1024 "
                       "(= max_seqlen), C = 768, NH = 12. " + COMMON + X_NOTE + "Output y (B, T, C).",
        "torch_model": {"globals": {"batch_size": "B", "max_seqlen": "T", "n_embd": "C", "n_head": "NH"},
                        "init": ["C", "NH", "1024"], "forward": ["x"]},
        "dims": {"default": {"B": 16, "T": 1024, "C": 768, "NH": 12}, "small": ATT_DIMS["small"],
                 "alt": ATT_DIMS["alt"]},
        "hidden": ATT_HIDDEN,
        "values": values(64, ATT_STRUCT_WHY % 64, large_why="the output is positively homogeneous of degree 3 in "
                         "the inputs (ReLU weights, no softmax): magnitude only scales it, which the structured "
                         "runs cover"),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. The outputs sum up to T = 1024 ReLU-weighted values "
                             "of O(0.1) scores (outputs O(1-10)); float32 sums err by ~1e-6 relative, inside 1e-4; "
                             "TF32 products fail"},
        "bytes": "4*(B*T*C + %s + B*T*C)" % n.params_numel(),
        "flops": "2*B*T*C*3*C + 4*B*T*T*C",
    }
    return n


SPECS += [p043, p044, p050]


# ---------------------------------------------------------------- modules (6, 13, 14, 17)

def p006():
    n = Net(6, "googlenet_inception_module", "6_GoogleNetInceptionModule", "GoogLeNet inception module")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "CT", "H", "W"])
    b1w, b1b = n.conv_views("b1", "O1", "CI", 1, "branch1x1")
    r3w, r3b = n.conv_views("b3r", "R3", "CI", 1, "branch3x3.0")
    b3w, b3b = n.conv_views("b3", "O3", "R3", 3, "branch3x3.1")
    r5w, r5b = n.conv_views("b5r", "R5", "CI", 1, "branch5x5.0")
    b5w, b5b = n.conv_views("b5", "O5", "R5", 5, "branch5x5.1")
    pw, pb = n.conv_views("bp", "PP", "CI", 1, "branch_pool.1")
    big = "B*max(max(CI, max(O1, O3)), max(max(R3, R5), max(O5, PP)))*H*W"
    for b in ("t", "r", "o"):
        n.buf(b, big)
    HW = "H*W"
    branches = []
    conv_bias_act(n, "x", b1w, b1b, "o", "t", "B", "CI", "O1", "H", "W", "H", "W", 1, 1, 0, act="L3_NONE")
    n.copy_channels("o", "y", "B", "O1", HW, "CT", 0)
    conv_bias_act(n, "x", r3w, r3b, "r", "t", "B", "CI", "R3", "H", "W", "H", "W", 1, 1, 0, act="L3_NONE")
    conv_bias_act(n, "r", b3w, b3b, "o", "t", "B", "R3", "O3", "H", "W", "H", "W", 3, 1, 1, act="L3_NONE")
    n.copy_channels("o", "y", "B", "O3", HW, "CT", "O1")
    conv_bias_act(n, "x", r5w, r5b, "r", "t", "B", "CI", "R5", "H", "W", "H", "W", 1, 1, 0, act="L3_NONE")
    conv_bias_act(n, "r", b5w, b5b, "o", "t", "B", "R5", "O5", "H", "W", "H", "W", 5, 1, 2, act="L3_NONE")
    n.copy_channels("o", "y", "B", "O5", HW, "CT", "O1 + O3")
    n.maxpool("x", "r", "B*CI", "H", "W", "H", "W", 3, 1, 1)
    conv_bias_act(n, "r", pw, pb, "o", "t", "B", "CI", "PP", "H", "W", "H", "W", 1, 1, 0, act="L3_NONE")
    n.copy_channels("o", "y", "B", "PP", HW, "CT", "O1 + O3 + O5")
    n.notes += ["Four branches (1x1; 1x1 then 3x3; 1x1 then 5x5; 3x3 max pool then 1x1), each conv with its",
                "bias in double, copied into its channels of the output (torch.cat on dim 1)."]
    n.manifest = {
        "description": "KernelBench level 3, problem 6 (6_GoogleNetInceptionModule): a GoogLeNet inception module on "
                       "x (B, CI, H, W), four branches concatenated on the channels in this order: Conv2d(CI, O1, 1); "
                       "Conv2d(CI, R3, 1) then Conv2d(R3, O3, 3, padding 1); Conv2d(CI, R5, 1) then Conv2d(R5, O5, "
                       "5, padding 2); MaxPool2d(3, stride 1, padding 1) then Conv2d(CI, PP, 1); all with bias, no "
                       "activation. CT = O1 + O3 + O5 + PP. KernelBench's sizes B = 10, CI = 480, O1 = 192, R3 = "
                       "96, O3 = 208, R5 = 16, O5 = 48, PP = 64, H = W = 224. " + COMMON + X_NOTE +
                       "Output y (B, CT, H, W).",
        "torch_model": {"globals": {"batch_size": "B", "in_channels": "CI", "height": "H", "width": "W"},
                        "init": ["CI", "O1", "R3", "O3", "R5", "O5", "PP"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 480, "O1": 192, "R3": 96, "O3": 208, "R5": 16, "O5": 48, "PP": 64, "H": 224, "W": 224},
                 "small": {"B": 2, "CI": 3, "O1": 2, "R3": 3, "O3": 4, "R5": 2, "O5": 3, "PP": 2, "H": 6, "W": 7},
                 "alt": [{"B": 3, "CI": 17, "O1": 5, "R3": 7, "O3": 33, "R5": 3, "O5": 9, "PP": 1, "H": 31, "W": 1},
                         {"B": 1, "CI": 1, "O1": 1, "R3": 1, "O3": 1, "R5": 1, "O5": 17, "PP": 19, "H": 65, "W": 66}]},
        "derived": {"CT": "O1 + O3 + O5 + PP"},
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "CI": {"min": 1, "max": 64}, "O1": {"min": 1, "max": 48},
                            "R3": {"min": 1, "max": 32}, "O3": {"min": 1, "max": 48}, "R5": {"min": 1, "max": 16},
                            "O5": {"min": 1, "max": 32}, "PP": {"min": 1, "max": 32}, "H": {"min": 1, "max": 80},
                            "W": {"min": 1, "max": 80}},
                   "why": "any batch, channel counts (off the conv2d_ref's 16-channel blocks) and image sizes down "
                          "to 1 (the 3x3 and 5x5 paddings and the pool's -inf padding at every border)"},
        "values": values(64, CONV_STRUCT_WHY % 64),
        "tolerance": cnn_tolerance("Six convolutions (up to 25*R5 terms), one or two deep per branch,"),
        "bytes": "4*(B*CI*H*W + %s + B*CT*H*W)" % n.params_numel(),
        "flops": "2*B*H*W*(CI*O1 + CI*R3 + 9*R3*O3 + CI*R5 + 25*R5*O5 + CI*PP)",
    }
    return n


def p013():
    n = Net(13, "densenet121_transition_layer", "13_DenseNet121TransitionLayer", "DenseNet-121 transition layer")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "CO", "OH", "OW"])
    g, b = n.bn_views("bn", "CI", "transition.0")
    w = n.conv_views("conv", "CO", "CI", 1, "transition.2", bias=False)[0]
    n.buf("a", "B*CI*H*W")
    n.buf("t", "B*CO*H*W")
    n.buf("stats", "2*CI", "f64")
    n.bn("x", "stats", g, b, "a", "B", "CI", "H*W", "L3_RELU")
    n.conv("a", w, "t", "B", "CI", "CO", "H", "W", "H", "W", 1, 1, 0)
    n.avgpool("t", "y", "B*CO", "H", "W", "OH", "OW", 2, 2)
    n.notes += ["Training-mode BatchNorm and ReLU in double, 1x1 conv (conv2d_ref), 2x2 average pool in double."]
    n.manifest = {
        "description": "KernelBench level 3, problem 13 (13_DenseNet121TransitionLayer): a DenseNet transition on x "
                       "(B, CI, H, W): BatchNorm2d(CI), ReLU, Conv2d(CI, CO, 1, no bias), AvgPool2d(2, stride 2) "
                       "(floor), output (B, CO, H/2, W/2). KernelBench's sizes B = 128, CI = 32, CO = 64, H = W = "
                       "256. " + COMMON + X_NOTE + "Output y (B, CO, OH, OW).",
        "torch_model": {"globals": {"batch_size": "B", "num_input_features": "CI", "num_output_features": "CO"},
                        "init": ["CI", "CO"], "forward": ["x"]},
        "dims": {"default": {"B": 128, "CI": 32, "CO": 64, "H": 256, "W": 256},
                 "small": {"B": 2, "CI": 3, "CO": 5, "H": 6, "W": 4},
                 "alt": [{"B": 3, "CI": 17, "CO": 33, "H": 31, "W": 2}, {"B": 1, "CI": 1, "CO": 7, "H": 67, "W": 129}]},
        "derived": {"OH": "H/2", "OW": "W/2"},
        "hidden": {"dims": {"B": {"min": 1, "max": 16}, "CI": {"min": 1, "max": 64}, "CO": {"min": 1, "max": 96},
                            "H": {"min": 2, "max": 160}, "W": {"min": 2, "max": 160}},
                   "require": [bn_require("B*H*W")],
                   "why": "any batch, channels (off the 16-channel blocks) and image sizes from 2 (odd sizes drop "
                          "the last row or column in the pool); " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("A training-mode BatchNorm, a 1x1 convolution (CI terms) and a 2x2 average"),
        "bytes": "4*(B*CI*H*W + %s + B*CO*OH*OW)" % n.params_numel(),
        "flops": "2*B*CO*CI*H*W + 8*B*CI*H*W + 4*B*CO*OH*OW",
    }
    check_bn_values(n, "B*H*W")
    return n


def p014():
    n = Net(14, "densenet121_dense_block", "14_DenseNet121DenseBlock", "DenseNet-121 dense block (6 layers)")
    L = 6
    n.input("x", ["B", "C0", "H", "W"])
    n.output("y", ["B", "CT", "H", "W"])
    n.buf("a", "B*(C0 + 5*G)*H*W")
    n.buf("h", "B*(C0 + 5*G)*H*W")
    n.buf("t", "B*G*H*W")
    n.buf("stats", "2*(C0 + 5*G)", "f64")
    # y holds the concatenated features as they grow: x first, then each layer's G channels
    n.copy_channels("x", "y", "B", "C0", "H*W", "CT", 0)
    for i in range(L):
        ci = "C0 + %d*G" % i if i else "C0"
        g, b = n.bn_views("l%d_bn" % i, ci, "layers.%d.0" % i)
        w = n.conv_views("l%d_conv" % i, "G", ci, 3, "layers.%d.2" % i, bias=False)[0]
        n.slice_channels("y", "a", "B", "CT", "H*W", ci, 0)
        n.bn("a", "stats", g, b, "h", "B", ci, "H*W", "L3_RELU")
        n.conv("h", w, "t", "B", ci, "G", "H", "W", "H", "W", 3, 1, 1)
        n.copy_channels("t", "y", "B", "G", "H*W", "CT", ci)
    n.notes += ["Six layers, each: its input (the first C0 + i*G channels of the growing output) made",
                "contiguous, training-mode BatchNorm and ReLU in double, 3x3 conv (conv2d_ref), appended."]
    n.manifest = {
        "description": "KernelBench level 3, problem 14 (14_DenseNet121DenseBlock): a DenseNet dense block of 6 layers "
                       "on x (B, C0, H, W): layer i (i = 0..5) takes the concatenation of x and the outputs of layers "
                       "0..i-1 (C0 + i*G channels) through BatchNorm2d, ReLU, Conv2d(C0 + i*G, G, 3, padding 1, no "
                       "bias), Dropout(0); the output is the concatenation of x and all six layers' outputs, CT = "
                       "C0 + 6G channels. KernelBench's sizes B = 10, C0 = 32, G = 32, H = W = 224 (num_layers = 6, "
                       "fixed here). " + COMMON + X_NOTE + "Output y (B, CT, H, W).",
        "torch_model": {"globals": {"batch_size": "B", "num_input_features": "C0", "growth_rate": "G"},
                        "init": ["6", "C0", "G"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "C0": 32, "G": 32, "H": 224, "W": 224},
                 "small": {"B": 2, "C0": 3, "G": 2, "H": 5, "W": 4},
                 "alt": [{"B": 3, "C0": 17, "G": 5, "H": 31, "W": 2}, {"B": 1, "C0": 1, "G": 17, "H": 33, "W": 65}]},
        "derived": {"CT": "C0 + 6*G"},
        "hidden": {"dims": {"B": {"min": 1, "max": 8}, "C0": {"min": 1, "max": 48}, "G": {"min": 1, "max": 40},
                            "H": {"min": 1, "max": 96}, "W": {"min": 1, "max": 96}},
                   "require": [bn_require("B*H*W")],
                   "why": "any batch, channels and growth (off the 16-channel blocks) and image sizes down to 1 (the "
                          "3x3 padding at every border); " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("Six layers of training-mode BatchNorm and 3x3 convolutions (up to 9*(C0 + 5G) terms)"),
        "bytes": "4*(B*C0*H*W + %s + B*CT*H*W)" % n.params_numel(),
        "flops": "2*B*H*W*G*9*(6*C0 + 15*G) + 8*B*H*W*(6*C0 + 15*G)",
    }
    check_bn_values(n, "B*H*W")
    return n


def p017():
    n = Net(17, "squeezenet_fire_module", "17_SqueezeNetFireModule", "SqueezeNet fire module")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "CT", "H", "W"])
    sw, sb = n.conv_views("squeeze", "SQ", "CI", 1, "squeeze")
    e1w, e1b = n.conv_views("e1", "E1", "SQ", 1, "expand1x1")
    e3w, e3b = n.conv_views("e3", "E3", "SQ", 3, "expand3x3")
    n.buf("s", "B*SQ*H*W")
    n.buf("t", "B*max(SQ, max(E1, E3))*H*W")
    n.buf("o", "B*max(E1, E3)*H*W")
    conv_bias_act(n, "x", sw, sb, "s", "t", "B", "CI", "SQ", "H", "W", "H", "W", 1, 1, 0)
    conv_bias_act(n, "s", e1w, e1b, "o", "t", "B", "SQ", "E1", "H", "W", "H", "W", 1, 1, 0)
    n.copy_channels("o", "y", "B", "E1", "H*W", "CT", 0)
    conv_bias_act(n, "s", e3w, e3b, "o", "t", "B", "SQ", "E3", "H", "W", "H", "W", 3, 1, 1)
    n.copy_channels("o", "y", "B", "E3", "H*W", "CT", "E1")
    n.notes += ["squeeze 1x1 conv, bias and ReLU; expand 1x1 and expand 3x3 (each with bias and ReLU in double)",
                "copied side by side into the output's channels."]
    n.manifest = {
        "description": "KernelBench level 3, problem 17 (17_SqueezeNetFireModule): a SqueezeNet fire module on x (B, "
                       "CI, H, W): s = ReLU(Conv2d(CI, SQ, 1)(x)), output cat(ReLU(Conv2d(SQ, E1, 1)(s)), "
                       "ReLU(Conv2d(SQ, E3, 3, padding 1)(s))) on the channels, CT = E1 + E3; convolutions with "
                       "bias. KernelBench's sizes B = 128, CI = 3, SQ = 6, E1 = E3 = 64, H = W = 256. " + COMMON +
                       X_NOTE + "Output y (B, CT, H, W).",
        "torch_model": {"globals": {"batch_size": "B", "num_input_features": "CI", "squeeze_channels": "SQ",
                                    "expand1x1_channels": "E1", "expand3x3_channels": "E3"},
                        "init": ["CI", "SQ", "E1", "E3"], "forward": ["x"]},
        "dims": {"default": {"B": 128, "CI": 3, "SQ": 6, "E1": 64, "E3": 64, "H": 256, "W": 256},
                 "small": {"B": 2, "CI": 3, "SQ": 2, "E1": 3, "E3": 4, "H": 5, "W": 6},
                 "alt": [{"B": 3, "CI": 17, "SQ": 5, "E1": 33, "E3": 1, "H": 31, "W": 1},
                         {"B": 1, "CI": 1, "SQ": 1, "E1": 7, "E3": 17, "H": 67, "W": 65}]},
        "derived": {"CT": "E1 + E3"},
        "hidden": {"dims": {"B": {"min": 1, "max": 16}, "CI": {"min": 1, "max": 64}, "SQ": {"min": 1, "max": 32},
                            "E1": {"min": 1, "max": 96}, "E3": {"min": 1, "max": 96}, "H": {"min": 1, "max": 96},
                            "W": {"min": 1, "max": 96}},
                   "why": "any batch, channel counts (off the 16-channel blocks) and image sizes down to 1 (the 3x3 "
                          "padding at every border)"},
        "values": values(64, CONV_STRUCT_WHY % 64),
        "tolerance": cnn_tolerance("Two layers of convolutions (up to 9*SQ terms)"),
        "bytes": "4*(B*CI*H*W + %s + B*CT*H*W)" % n.params_numel(),
        "flops": "2*B*H*W*(CI*SQ + SQ*E1 + 9*SQ*E3)",
    }
    return n


SPECS += [p006, p013, p014, p017]


# ---------------------------------------------------------------- 19, 21, 27

def conv_bias_bn(n, x, w, cb, g, b, y, tmp, tmp2, B, CI, CO, H, W, OH, OW, K, S, P, act="L3_RELU", G=1):
    """nn.Conv2d with bias, then training-mode BatchNorm2d and an activation (the bias is added in
    double and rounded, as the convolution's float output would hold it, before the statistics)."""
    n.conv(x, w, tmp, B, CI, CO, H, W, OH, OW, K, S, P, G=G)
    n.bias_act(tmp, cb, tmp2, "(%s)*(%s)*(%s)*(%s)" % (B, CO, OH, OW), "(%s)*(%s)" % (OH, OW), CO)
    n.bn(tmp2, "stats", g, b, y, B, CO, "(%s)*(%s)" % (OH, OW), act)


def p019():
    n = Net(19, "mobilenet_v1", "19_MobileNetV1", "MobileNet v1")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "NC"])
    cfg = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)] + \
          [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
    big = "B*max(max(64*S0H*S0W, 128*S1H*S1W), max(256*S2H*S2W, max(512*S3H*S3W, 1024*S4H*S4W)))"
    for b in ("a", "b", "t"):
        n.buf(b, big)
    n.buf("stats", "2*1024", "f64")
    n.buf("acc", "B*NC", "f64")
    w0 = n.conv_views("c0", 32, "CI", 3, "model.0.0", bias=False)[0]
    g0, b0 = n.bn_views("bn0", 32, "model.0.1")
    conv_bn(n, "x", w0, g0, b0, "a", "t", "B", "CI", 32, "H", "W", "S0H", "S0W", 3, 2, 1)
    cur, other, hw, si = "a", "b", ("S0H", "S0W"), 0
    for k, (ci, co, s) in enumerate(cfg, 1):
        if s == 2:
            si += 1
        oh, ow = "S%dH" % si, "S%dW" % si
        wd = n.conv_views("dw%d" % k, ci, 1, 3, "model.%d.0" % k, bias=False)[0]
        gd, bd = n.bn_views("dbn%d" % k, ci, "model.%d.1" % k)
        wp = n.conv_views("pw%d" % k, co, ci, 1, "model.%d.3" % k, bias=False)[0]
        gp, bp = n.bn_views("pbn%d" % k, co, "model.%d.4" % k)
        conv_bn(n, cur, wd, gd, bd, other, "t", "B", ci, ci, hw[0], hw[1], oh, ow, 3, s, 1, G=ci)
        conv_bn(n, other, wp, gp, bp, cur, "t", "B", ci, co, oh, ow, oh, ow, 1, 1, 0)
        hw = (oh, ow)
    n.avgpool(cur, other, "B*1024", "S4H", "S4W", 1, 1, 7, 7)
    fw, fb = n.linear_views("fc", "NC", 1024, "fc")
    n.linear(other, fw, fb, "y", "B", "NC", 1024)
    n.notes += ["conv 3x3/2 BN ReLU, 13 depthwise-separable blocks (depthwise 3x3 as conv2d_ref with one group per",
                "channel, BN ReLU, pointwise 1x1, BN ReLU; BatchNorm in training mode in double), 7x7 average",
                "pool, Linear."]
    derived = {}
    for d in ("H", "W"):
        derived["S0" + d] = "(%s - 1)/2 + 1" % d
        for i in range(1, 5):
            derived["S%d%s" % (i, d)] = "(S%d%s - 1)/2 + 1" % (i - 1, d)
    n.manifest = {
        "description": "KernelBench level 3, problem 19 (19_MobileNetV1): MobileNet v1 (alpha 1) on x (B, CI, H, W): "
                       "Conv2d(CI, 32, 3, stride 2, padding 1, no bias), BatchNorm2d, ReLU, then 13 depthwise-separable "
                       "blocks (Conv2d(c, c, 3, stride s, padding 1, groups c, no bias), BatchNorm2d, ReLU, Conv2d(c, "
                       "c', 1, no bias), BatchNorm2d, ReLU) with (c, c', s) = (32, 64, 1), (64, 128, 2), (128, 128, "
                       "1), (128, 256, 2), (256, 256, 1), (256, 512, 2), 5 x (512, 512, 1), (512, 1024, 2), (1024, "
                       "1024, 1), AvgPool2d(7), flatten, Linear(1024, NC). Each stride-2 step maps n to (n - 1)/2 + "
                       "1; H and W from 193 to 256 leave a 7-8 map after the five halvings, pooled to 1x1. KernelBench's sizes B = 10, CI = "
                       "3, H = W = 224, NC = 1000. " + COMMON + X_NOTE + "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "input_channels": "CI", "num_classes": "NC"},
                        "init": ["NC", "CI", "1.0"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 3, "H": 224, "W": 224, "NC": 1000},
                 "small": {"B": 1, "CI": 3, "H": 224, "W": 224, "NC": 3},
                 "alt": [{"B": 2, "CI": 1, "H": 193, "W": 255, "NC": 1}, {"B": 3, "CI": 4, "H": 231, "W": 200, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "CI": {"min": 1, "max": 4}, "H": {"min": 193, "max": 256},
                            "W": {"min": 193, "max": 256}, "NC": {"min": 1, "max": 1000}},
                   "require": ["(S4H - 7)/7 + 1 == 1", "(S4W - 7)/7 + 1 == 1"],
                   "max_flops": 3e10,
                   "why": "batches of 1 to 4, 1 to 4 input channels, image sizes whose last map pools to 1x1 "
                          "(193-256: odd maps at every stride), any class count; BatchNorm has at least 49 values "
                          "per channel at every layer"},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("27 convolutions with training-mode BatchNorm and a Linear layer"),
        "bytes": "4*(B*CI*H*W + %s + B*NC)" % n.params_numel(),
        "flops": "2*B*(32*S0H*S0W*9*CI + S0H*S0W*(9*32 + 32*64) + S1H*S1W*(9*64 + 64*128 + 9*128 + 128*128) + "
                 "S2H*S2W*(9*128 + 128*256 + 9*256 + 256*256) + S3H*S3W*(9*256 + 256*512 + 5*(9*512 + 512*512)) + "
                 "S4H*S4W*(9*512 + 512*1024 + 9*1024 + 1024*1024) + 1024*NC)",
    }
    return n


def p021():
    n = Net(21, "efficientnet_mbconv", "21_EfficientNetMBConv", "EfficientNet MBConv block")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "CO", "OH", "OW"])
    we = n.conv_views("expand", "HD", "CI", 1, "expand_conv.0", bias=False)[0]
    ge, be = n.bn_views("ebn", "HD", "expand_conv.1")
    wd = n.conv_views("dw", "HD", 1, "K", "depthwise_conv.0", bias=False)[0]
    gd, bd = n.bn_views("dbn", "HD", "depthwise_conv.1")
    wp = n.conv_views("project", "CO", "HD", 1, "project_conv.0", bias=False)[0]
    gp, bp = n.bn_views("pbn", "CO", "project_conv.1")
    for b in ("a", "t"):
        n.buf(b, "B*max(HD, CO)*H*W")
    n.buf("stats", "2*max(HD, CO)", "f64")
    conv_bn(n, "x", we, ge, be, "a", "t", "B", "CI", "HD", "H", "W", "H", "W", 1, 1, 0, act="L3_RELU6")
    n.conv("a", wd, "t", "B", "HD", "HD", "H", "W", "OH", "OW", "K", "S", "(K - 1)/2", G="HD")
    n.bn("t", "stats", gd, bd, "a", "B", "HD", "OH*OW", "L3_RELU6")
    conv_bn(n, "a", wp, gp, bp, "y", "t", "B", "HD", "CO", "OH", "OW", "OH", "OW", 1, 1, 0, act="L3_NONE")
    n.notes += ["expand 1x1 conv, BN, ReLU6; depthwise KxK/S conv (one group per channel), BN, ReLU6; project 1x1",
                "conv, BN (training-mode statistics in double); no residual (CI != CO in every dims set)."]
    n.manifest = {
        "description": "KernelBench level 3, problem 21 (21_EfficientNetMBConv): an MBConv block on x (B, CI, H, W) with "
                       "HD = CI*E: Conv2d(CI, HD, 1, no bias), BatchNorm2d, ReLU6; Conv2d(HD, HD, K, stride S, "
                       "padding (K-1)/2, groups HD, no bias), BatchNorm2d, ReLU6; Conv2d(HD, CO, 1, no bias), "
                       "BatchNorm2d; output (B, CO, OH, OW), OH = (H + 2*((K-1)/2) - K)/S + 1. The residual "
                       "(stride 1 and CI == CO) never applies here: every dims set has CI != CO, as KernelBench's. "
                       "KernelBench's sizes B = 10, CI = 112, CO = 192, K = 5, S = 2, E = 6, H = W = 224. " + COMMON +
                       X_NOTE + "Output y (B, CO, OH, OW).",
        "torch_model": {"globals": {"batch_size": "B", "in_channels": "CI", "out_channels": "CO", "kernel_size": "K",
                                    "stride": "S", "expand_ratio": "E"},
                        "init": ["CI", "CO", "K", "S", "E"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 112, "CO": 192, "K": 5, "S": 2, "E": 6, "H": 224, "W": 224},
                 "small": {"B": 2, "CI": 3, "CO": 5, "K": 3, "S": 1, "E": 2, "H": 6, "W": 5},
                 "alt": [{"B": 3, "CI": 5, "CO": 17, "K": 5, "S": 2, "E": 3, "H": 33, "W": 30},
                         {"B": 1, "CI": 7, "CO": 1, "K": 3, "S": 1, "E": 6, "H": 1, "W": 67}]},
        "derived": {"HD": "CI*E", "OH": "(H + 2*((K - 1)/2) - K)/S + 1", "OW": "(W + 2*((K - 1)/2) - K)/S + 1"},
        "hidden": {"dims": {"B": {"min": 1, "max": 8}, "CI": {"min": 1, "max": 48}, "CO": {"min": 1, "max": 64},
                            "K": {"values": [3, 5]}, "S": {"values": [1, 2]}, "E": {"values": [2, 3, 4, 6]},
                            "H": {"min": 1, "max": 96}, "W": {"min": 1, "max": 96}},
                   "require": ["CI != CO", bn_require("B*OH*OW")],
                   "why": "any batch, channels (off the 16-channel blocks) and image sizes down to 1, kernels 3 and 5, "
                          "strides 1 and 2, EfficientNet's expansion ratios; CI != CO keeps the block without its "
                          "residual as KernelBench's; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("Three convolutions with training-mode BatchNorm (sums of up to HD terms)"),
        "bytes": "4*(B*CI*H*W + %s + B*CO*OH*OW)" % n.params_numel(),
        "flops": "2*B*(HD*CI*H*W + HD*K*K*OH*OW + CO*HD*OH*OW)",
    }
    check_bn_values(n, "B*OH*OW")
    return n


def p027():
    n = Net(27, "regnet", "27_RegNet", "RegNet-style network (3 stages)")
    widths = [64, 128, 256]
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "NC"])
    big = "B*64*H*W"
    for b in ("a", "b", "t", "u"):
        n.buf(b, big)
    n.buf("stats", "2*256", "f64")
    n.buf("acc", "B*NC", "f64")
    cur, ci, hw = "x", "CI", ("H", "W")
    for s, co in enumerate(widths):
        w1, c1 = n.conv_views("s%d_c1" % s, co, ci, 3, "feature_extractor.%d.0" % s)
        g1, b1 = n.bn_views("s%d_bn1" % s, co, "feature_extractor.%d.1" % s)
        w2, c2 = n.conv_views("s%d_c2" % s, co, co, 3, "feature_extractor.%d.3" % s)
        g2, b2 = n.bn_views("s%d_bn2" % s, co, "feature_extractor.%d.4" % s)
        conv_bias_bn(n, cur, w1, c1, g1, b1, "a", "t", "u", "B", ci, co, hw[0], hw[1], hw[0], hw[1], 3, 1, 1)
        conv_bias_bn(n, "a", w2, c2, g2, b2, "b", "t", "u", "B", co, co, hw[0], hw[1], hw[0], hw[1], 3, 1, 1)
        oh, ow = "H%d" % (s + 1), "W%d" % (s + 1)
        n.maxpool("b", "a", "B*%d" % co, hw[0], hw[1], oh, ow, 2, 2)
        cur, ci, hw = "a", co, (oh, ow)  # the next stage's first conv reads a before its BN writes a
    n.row_mean(cur, "b", "B*256", "H3*W3")
    fw, fb = n.linear_views("fc", "NC", 256, "fc")
    n.linear("b", fw, fb, "y", "B", "NC", 256)
    n.notes += ["Three stages of (3x3 conv with bias, BN, ReLU) twice and a 2x2 max pool, BatchNorm in training mode",
                "in double; the mean over H and W in double; Linear."]
    derived = {}
    for d in ("H", "W"):
        derived[d + "1"] = "%s/2" % d
        derived[d + "2"] = "%s1/2" % d
        derived[d + "3"] = "%s2/2" % d
    n.manifest = {
        "description": "KernelBench level 3, problem 27 (27_RegNet): three stages on x (B, CI, H, W), stage widths 64, "
                       "128, 256, each Conv2d(c, w, 3, padding 1), BatchNorm2d, ReLU, Conv2d(w, w, 3, padding 1), "
                       "BatchNorm2d, ReLU, MaxPool2d(2, stride 2) (floor); then the mean over H and W and "
                       "Linear(256, NC). KernelBench's sizes B = 8, CI = 3, H = W = 224, NC = 10 (stages = 3, "
                       "block_widths = [64, 128, 256], fixed here). " + COMMON + X_NOTE + "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "input_channels": "CI", "output_classes": "NC"},
                        "init": ["CI", "3", "[64, 128, 256]", "NC"], "forward": ["x"]},
        "dims": {"default": {"B": 8, "CI": 3, "H": 224, "W": 224, "NC": 10},
                 "small": {"B": 4, "CI": 3, "H": 16, "W": 17, "NC": 3},
                 "alt": [{"B": 3, "CI": 1, "H": 33, "W": 17, "NC": 1}, {"B": 1, "CI": 5, "H": 67, "W": 130, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 8}, "CI": {"min": 1, "max": 8}, "H": {"min": 8, "max": 128},
                            "W": {"min": 8, "max": 128}, "NC": {"min": 1, "max": 1000}},
                   "require": [bn_require("B*H3*W3")],
                   "why": "any batch, input channels, image sizes from 8 (odd sizes drop a row or column at each "
                          "pool) and class counts; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("Six 3x3 convolutions (up to 2304 terms) with training-mode BatchNorm and a Linear layer"),
        "bytes": "4*(B*CI*H*W + %s + B*NC)" % n.params_numel(),
        "flops": "2*B*(H*W*64*9*(CI + 64) + H1*W1*128*9*(64 + 128) + H2*W2*256*9*(128 + 256) + 256*NC)",
    }
    check_bn_values(n, "B*H3*W3")
    return n


SPECS += [p019, p021, p027]


# ---------------------------------------------------------------- 10: ResNet-101 (stacked blocks, loops)

def p010():
    n = Net(10, "resnet101", "10_ResNet101", "ResNet-101 (bottleneck stages of N1-N4 blocks)")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    SZ = "B*max(64*C1H*C1W, 256*L1H*L1W)"
    n.buf("act", "2*" + SZ)
    n.buf("sx", SZ)
    for b in ("t", "u", "v", "d"):
        n.buf(b, SZ)
    n.buf("stats", "2*2048", "f64")
    n.buf("acc", "B*NC", "f64")
    w1 = n.conv_views("conv1", 64, 3, 7, "conv1", bias=False)[0]
    g1, b1 = n.bn_views("bn1", 64, "bn1")
    conv_bn(n, "x", w1, g1, b1, "u", "t", "B", 3, 64, "H", "W", "C1H", "C1W", 7, 2, 3)
    n.maxpool("u", "sx", "B*64", "C1H", "C1W", "L1H", "L1W", 3, 2, 1)
    ci, hw = 64, ("L1H", "L1W")
    for s, mid in enumerate([64, 128, 256, 512], 1):
        co, stride, NB = 4 * mid, 1 if s == 1 else 2, "N%d" % s
        oh, ow = "L%dH" % s, "L%dW" % s
        t = "layer%d" % s
        # block 0: from sx into act[0], with the downsample branch
        c1 = n.conv_views("s%d_0_c1" % s, mid, ci, 1, t + ".0.conv1", bias=False)[0]
        bn1 = n.bn_views("s%d_0_bn1" % s, mid, t + ".0.bn1")
        c2 = n.conv_views("s%d_0_c2" % s, mid, mid, 3, t + ".0.conv2", bias=False)[0]
        bn2 = n.bn_views("s%d_0_bn2" % s, mid, t + ".0.bn2")
        c3 = n.conv_views("s%d_0_c3" % s, co, mid, 1, t + ".0.conv3", bias=False)[0]
        bn3 = n.bn_views("s%d_0_bn3" % s, co, t + ".0.bn3")
        dc = n.conv_views("s%d_0_dc" % s, co, ci, 1, t + ".0.downsample.0", bias=False)[0]
        dbn = n.bn_views("s%d_0_dbn" % s, co, t + ".0.downsample.1")
        conv_bn(n, "sx", c1, bn1[0], bn1[1], "u", "t", "B", ci, mid, hw[0], hw[1], hw[0], hw[1], 1, 1, 0)
        conv_bn(n, "u", c2, bn2[0], bn2[1], "v", "t", "B", mid, mid, hw[0], hw[1], oh, ow, 3, stride, 1)
        conv_bn(n, "sx", dc, dbn[0], dbn[1], "d", "t", "B", ci, co, hw[0], hw[1], oh, ow, 1, stride, 0, act="L3_NONE")
        conv_bn(n, "v", c3, bn3[0], bn3[1], "act", "t", "B", mid, co, oh, ow, oh, ow, 1, 1, 0, res="d")
        # blocks 1 .. N-1: one stacked view per parameter, a @for loop over act's two halves
        st = "N%d-1" % s
        k1 = n.conv_views("s%d_c1" % s, mid, co, 1, t + ".{i+1}.conv1", bias=False, stack=st)[0]
        kb1 = n.bn_views("s%d_bn1" % s, mid, t + ".{i+1}.bn1", stack=st)
        k2 = n.conv_views("s%d_c2" % s, mid, mid, 3, t + ".{i+1}.conv2", bias=False, stack=st)[0]
        kb2 = n.bn_views("s%d_bn2" % s, mid, t + ".{i+1}.bn2", stack=st)
        k3 = n.conv_views("s%d_c3" % s, co, mid, 1, t + ".{i+1}.conv3", bias=False, stack=st)[0]
        kb3 = n.bn_views("s%d_bn3" % s, co, t + ".{i+1}.bn3", stack=st)
        cur, nxt = "act[(b %% 2)*%s]" % SZ, "act[((b + 1) %% 2)*%s]" % SZ
        at = lambda v, size: "%s[b*%d]" % (v, size)
        with n.loop("b", 0, st):
            conv_bn(n, cur, at(k1, mid * co), at(kb1[0], mid), at(kb1[1], mid), "u", "t", "B", co, mid,
                    oh, ow, oh, ow, 1, 1, 0)
            conv_bn(n, "u", at(k2, mid * mid * 9), at(kb2[0], mid), at(kb2[1], mid), "v", "t", "B", mid, mid,
                    oh, ow, oh, ow, 3, 1, 1)
            conv_bn(n, "v", at(k3, co * mid), at(kb3[0], co), at(kb3[1], co), nxt, "t", "B", mid, co,
                    oh, ow, oh, ow, 1, 1, 0, res=cur)
        n.copy("act[((%s - 1) %% 2)*%s]" % (NB, SZ), "sx", "B*%d*%s*%s" % (co, oh, ow))
        ci, hw = co, (oh, ow)
    n.row_mean("sx", "u", "B*2048", "L4H*L4W")
    fw, fb = n.linear_views("fc", "NC", 2048, "fc")
    n.linear("u", fw, fb, "y", "B", "NC", 2048)
    n.notes += ["conv1 7x7/2 BN ReLU, max pool 3/2; four stages of bottleneck blocks (1x1, 3x3 with the stage's",
                "stride, 1x1 to 4x the width; BN after each, training mode in double; residual and ReLU in",
                "double): each stage's first block (with the downsample branch) explicit, blocks 1..N-1 one",
                "loop over stacked views; global average pool; Linear."]
    derived = {}
    for d in ("H", "W"):
        derived["C1" + d] = "(%s - 1)/2 + 1" % d
        derived["L1" + d] = "(C1%s - 1)/2 + 1" % d
        derived["L2" + d] = "(L1%s - 1)/2 + 1" % d
        derived["L3" + d] = "(L2%s - 1)/2 + 1" % d
        derived["L4" + d] = "(L3%s - 1)/2 + 1" % d
    n.manifest = {
        "description": "KernelBench level 3, problem 10 (10_ResNet101): ResNet with bottleneck blocks on x (B, 3, H, W), "
                       "layers = [N1, N2, N3, N4]: Conv2d(3, 64, 7, stride 2, padding 3, no bias), BatchNorm2d, ReLU, "
                       "MaxPool2d(3, stride 2, padding 1), four stages of N1..N4 bottleneck blocks of widths 64, 128, "
                       "256, 512 (each: Conv2d 1x1 to the width, BN, ReLU, Conv2d 3x3 with the stage's stride (1, 2, "
                       "2, 2; padding 1), BN, ReLU, Conv2d 1x1 to 4x the width, BN, plus the identity or, in each "
                       "stage's first block, the downsample Conv2d 1x1 with the stride and BN; then ReLU; no conv has "
                       "a bias), adaptive average pool to 1x1, Linear(2048, NC). Every halving is (n - 1)/2 + 1. "
                       "Blocks 1..N-1 of a stage are stacked in one view per parameter (s3_c1_w [N3-1, 256, 1024, 1, "
                       "1]: block i+1 of layer3 at index i). KernelBench's sizes B = 10, H = W = 224, layers = [3, 4, "
                       "23, 3], NC = 1000. " + COMMON + X_NOTE + "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "height": "H", "width": "W", "layers": "[N1, N2, N3, N4]",
                                    "num_classes": "NC"},
                        "init": ["[N1, N2, N3, N4]", "NC"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "H": 224, "W": 224, "N1": 3, "N2": 4, "N3": 23, "N4": 3, "NC": 1000},
                 "small": {"B": 4, "H": 64, "W": 64, "N1": 1, "N2": 2, "N3": 1, "N4": 1, "NC": 3},
                 "alt": [{"B": 3, "H": 45, "W": 67, "N1": 2, "N2": 1, "N3": 3, "N4": 2, "NC": 1},
                         {"B": 1, "H": 97, "W": 129, "N1": 1, "N2": 3, "N3": 2, "N4": 1, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 3}, "H": {"min": 17, "max": 160}, "W": {"min": 17, "max": 160},
                            "N1": {"min": 1, "max": 4}, "N2": {"min": 1, "max": 5}, "N3": {"min": 1, "max": 8},
                            "N4": {"min": 1, "max": 4}, "NC": {"min": 1, "max": 1000}},
                   "require": [bn_require("B*L4H*L4W")],
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 3, images of 17 to 160 (odd sizes halve with rounding up), 1 to 8 blocks "
                          "a stage (one block: an empty stack and a loop of no trips), any class count; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": {"atol": 4e-4, "rtol": 4e-4,
                      "why": "Four times KernelBench's float32 tolerance, measured: PyTorch's own float32 Model "
                             "(cuDNN, TF32 off) differs from this reference (which agrees with PyTorch in float64 "
                             "at every fixed dims set) by up to 2.2x 1e-4 at the default dims (H200, 2026-11-27, "
                             "seed 11, two calls; max abs 2.4e-4): over 100 convolutions with training-mode "
                             "BatchNorm renormalising every layer, float32's per-layer rounding (~1e-6 relative) "
                             "is amplified where a channel's variance is small. 4e-4 keeps a margin of about 1.8 "
                             "over that float32 implementation; TF32 products (~5e-4 a product, compounded) fail"},
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": "2*B*(64*C1H*C1W*147 + L1H*L1W*(64*64 + 9*64*64 + 64*256 + 64*256 + (N1 - 1)*(256*64 + 9*64*64 + "
                 "64*256)) + L2H*L2W*(256*128 + 9*128*128 + 128*512 + 256*512 + (N2 - 1)*(512*128 + 9*128*128 + "
                 "128*512)) + L3H*L3W*(512*256 + 9*256*256 + 256*1024 + 512*1024 + (N3 - 1)*(1024*256 + 9*256*256 "
                 "+ 256*1024)) + L4H*L4W*(1024*512 + 9*512*512 + 512*2048 + 1024*2048 + (N4 - 1)*(2048*512 + "
                 "9*512*512 + 512*2048)) + 2048*NC)",
    }
    check_bn_values(n, "B*L4H*L4W")
    return n


SPECS += [p010]


# ---------------------------------------------------------------- 20, 22-24: inverted residual networks

def mbconv(n, pre, keys, x, y, B, ci, co, hw, ohw, K, S, E, act, res, init=None, se=None):
    """An MBConv / inverted-residual block from x into y over scratch a, b, t: [1x1 expand conv,
    BN, act] (when keys["e"]), KxK/S depthwise conv (one group per channel), BN, act, [SE:
    global average pool, 1x1 conv to HD/4, ReLU, 1x1 conv back, sigmoid: the pooled map, 1x1 from
    here on, as KernelBench's 24 runs it], 1x1 project conv, BN, plus x when res. keys: torch
    prefixes (conv, bn) per part. init(co, ci, k): a conv weight's init (default PyTorch's)."""
    hd = ci * E
    P = (K - 1) // 2
    cv = lambda name, o, i, k, key: (n.view(name, [o, i, k, k], init(o, i, k), key + ".weight") if init
                                     else n.conv_views(name, o, i, k, key, bias=False)[0])
    src = x
    if keys.get("e"):
        w = cv(pre + "e_w", hd, ci, 1, keys["e"][0])
        g, b = n.bn_views(pre + "e_bn", hd, keys["e"][1])
        conv_bn(n, x, w, g, b, "a", "t", B, ci, hd, hw[0], hw[1], hw[0], hw[1], 1, 1, 0, act=act)
        src = "a"
    w = cv(pre + "d_w", hd, 1, K, keys["d"][0])
    g, b = n.bn_views(pre + "d_bn", hd, keys["d"][1])
    conv_bn(n, src, w, g, b, "b", "t", B, hd, hd, hw[0], hw[1], ohw[0], ohw[1], K, S, P, act=act, G=hd)
    src, sp = "b", ohw
    if se:
        n.row_mean("b", "a", "%s*%d" % (B, hd), "(%s)*(%s)" % ohw)
        w1 = n.view(pre + "se1_w", [hd // 4, hd, 1, 1], fan_in(hd), se[0] + ".weight")
        w2 = n.view(pre + "se2_w", [hd, hd // 4, 1, 1], fan_in(hd // 4), se[1] + ".weight")
        n.conv("a", w1, "t", B, hd, hd // 4, 1, 1, 1, 1, 1, 1, 0)
        n.bias_act("t", None, "b", "%s*%d" % (B, hd // 4), 1, hd // 4, "L3_RELU")
        n.conv("b", w2, "t", B, hd // 4, hd, 1, 1, 1, 1, 1, 1, 0)
        n.bias_act("t", None, "a", "%s*%d" % (B, hd), 1, hd, "L3_SIGMOID")
        src, sp = "a", (1, 1)
    w = cv(pre + "p_w", co, hd, 1, keys["p"][0])
    g, b = n.bn_views(pre + "p_bn", co, keys["p"][1])
    conv_bn(n, src, w, g, b, y, "t", B, hd, co, sp[0], sp[1], sp[0], sp[1], 1, 1, 0, act="L3_NONE",
            res=x if res else "0")
    return sp


def inverted_net(n, blocks, stem_act, head_c, head_act, head_keys, fc_key, init=None, fc_init=None, se=False):
    """Stem conv 3x3/2 (32 channels) BN act, the blocks [(ci, co, K, S, E, keys, res, se_keys)], head
    1x1 conv to head_c, BN, act, global average pool, Linear(head_c, NC)."""
    maxc = max([32, head_c] + [b[0] * b[4] for b in blocks] + [b[1] for b in blocks])
    big = "B*%d*S0H*S0W" % maxc
    for b in ("a", "b", "t", "p", "q"):
        n.buf(b, big)
    n.buf("stats", "2*%d" % maxc, "f64")
    n.buf("acc", "B*NC", "f64")
    stem = n.view("stem_w", [32, 3, 3, 3], init(32, 3, 3) if init else fan_in(27), head_keys[0][0] + ".weight")
    sg, sb = n.bn_views("stem_bn", 32, head_keys[0][1])
    conv_bn(n, "x", stem, sg, sb, "p", "t", "B", 3, 32, "H", "W", "S0H", "S0W", 3, 2, 1, act=stem_act)
    cur, other, hw, si = "p", "q", ("S0H", "S0W"), 0
    for k, (ci, co, K, S, E, keys, res, sek) in enumerate(blocks):
        if S == 2 and hw != (1, 1):
            si += 1
        ohw = ("S%dH" % si, "S%dW" % si) if hw != (1, 1) else (1, 1)
        hw = mbconv(n, "b%d_" % k, keys, cur, other, "B", ci, co, hw, ohw, K, S, E, "L3_RELU6" if not se else "L3_RELU",
                    res, init, sek)
        cur, other = other, cur
    hwn = n.view("head_w", [head_c, blocks[-1][1], 1, 1], init(head_c, blocks[-1][1], 1) if init else fan_in(blocks[-1][1]),
                 head_keys[1][0] + ".weight")
    hg, hb = n.bn_views("head_bn", head_c, head_keys[1][1])
    conv_bn(n, cur, hwn, hg, hb, other, "t", "B", blocks[-1][1], head_c, hw[0], hw[1], hw[0], hw[1], 1, 1, 0, act=head_act)
    n.row_mean(other, cur, "B*%d" % head_c, "(%s)*(%s)" % hw)
    if fc_init:
        fw = n.view("fc_w", ["NC", head_c], fc_init, fc_key + ".weight")
        fb = n.view("fc_b", ["NC"], {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}},
                    fc_key + ".bias")
    else:
        fw, fb = n.linear_views("fc", "NC", head_c, fc_key)
    n.linear(cur, fw, fb, "y", "B", "NC", head_c)
    return si


def spatial_derived(levels):
    d = {}
    for a in ("H", "W"):
        d["S0" + a] = "(%s - 1)/2 + 1" % a
        for i in range(1, levels + 1):
            d["S%d%s" % (i, a)] = "(S%d%s - 1)/2 + 1" % (i - 1, a)
    return d


# Training-mode BatchNorm over very few values per channel is ill-conditioned: over two values
# it maps each channel to about +-1 whatever the input's size, so a channel whose two values
# nearly tie (|difference| ~ sqrt(eps)) multiplies the error it gets by up to 1/(2 sqrt(eps)) =
# 158, and a stack of such layers compounds it. Float32 rounding between layers (the reference's,
# any float32 candidate's, PyTorch's) then moves the output by up to 0.2 at B = 2 on a 1x1 map
# (a CPU emulation of these references, float32 against float64 activations: worst |d|/tol 290 to
# 1670 for 020/022/024 at B = 2 and a 1x1 last map, the crosscheck's 776/1411/4212 on the H200;
# 0.02-0.05 with 8 or more values per channel). So every BatchNorm sees at least MIN_BN_VALUES.
MIN_BN_VALUES = 16


def inverted_manifest(n, num, kb_name, text, sizes_text, levels, kb_dims, torch_model, extra_require=(),
                      hmin=32, hmax=160, bmin=1, bmax=4, small=None, alt=None, bn_values=None):
    """bn_values: the expression of the fewest values any BatchNorm normalises per channel (default
    B times the last map), required to be at least MIN_BN_VALUES in every dims set."""
    last = "S%d" % levels
    bn_values = bn_values or "B*%sH*%sW" % (last, last)
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): %s Every stride-2 step maps n to (n - 1)/2 + 1. "
                       "KernelBench's sizes %s. " % (num, kb_name, text, sizes_text) + COMMON + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": torch_model,
        "dims": {"default": kb_dims,
                 "small": small or {"B": 4, "H": 64, "W": 64, "NC": 3},
                 "alt": alt or [{"B": 3, "H": 45, "W": 67, "NC": 1}, {"B": 2, "H": 97, "W": 33, "NC": 97}]},
        "derived": spatial_derived(levels),
        "hidden": {"dims": {"B": {"min": bmin, "max": bmax}, "H": {"min": hmin, "max": hmax},
                            "W": {"min": hmin, "max": hmax}, "NC": {"min": 1, "max": 1000}},
                   "require": [bn_require(bn_values)] + list(extra_require),
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of %d to %d, images of %d to %d (odd sizes halve with "
                          "rounding up at every stride), any class count; at least %d values per channel "
                          "for every BatchNorm: training-mode BatchNorm over fewer (two on a 1x1 map) "
                          "amplifies float32 rounding chaotically, so that no float32 network agrees with "
                          "a float64 one within the tolerance" % (bmin, bmax, hmin, hmax, MIN_BN_VALUES)},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("Some fifty convolutions with training-mode BatchNorm and a Linear layer"),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    check_bn_values(n, bn_values)


def bn_require(bn_values):
    """The require that keeps every BatchNorm at MIN_BN_VALUES values per channel or more."""
    return "%s >= %d" % (bn_values, MIN_BN_VALUES)


BN_WHY = ("at least %d values per channel for every BatchNorm (training-mode BatchNorm over fewer, two "
          "on a 1x1 map, amplifies float32 rounding chaotically, so that no float32 network agrees with a "
          "float64 one within the tolerance)" % MIN_BN_VALUES)


def check_bn_values(n, bn_values):
    """Refuses a fixed dims set (default, small, alt) on which a BatchNorm would normalise fewer
    than MIN_BN_VALUES values per channel: the hidden draws meet bn_require's require, the fixed
    sets must meet it too."""
    for name, d in [("default", n.manifest["dims"]["default"]), ("small", n.manifest["dims"]["small"])] + \
            [("alt%d" % i, a) for i, a in enumerate(n.manifest["dims"]["alt"])]:
        d = dict(d)
        for k, e in (n.manifest.get("derived") or {}).items():
            d[k] = kcproblems.eval_dim_expr(e, d)
        if kcproblems.eval_dim_expr(bn_values, d) < MIN_BN_VALUES:
            raise ValueError("%s: dims %s give BatchNorm %d values per channel (< %d)"
                             % (n.pid, name, kcproblems.eval_dim_expr(bn_values, d), MIN_BN_VALUES))


def p020():
    n = Net(20, "mobilenet_v2", "20_MobileNetV2", "MobileNet v2 (no residual connections, as KernelBench's)")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
    blocks, ci, idx = [], 32, 3
    for t, c, reps, s in setting:
        for i in range(reps):
            f = "features.%d." % idx
            keys = ({"d": (f + "0", f + "1"), "p": (f + "3", f + "4")} if t == 1 else
                    {"e": (f + "0", f + "1"), "d": (f + "3", f + "4"), "p": (f + "6", f + "7")})
            blocks.append((ci, c, 3, s if i == 0 else 1, t, keys, False, None))
            ci, idx = c, idx + 1
    kaiming = lambda co, ci_, k: {"dist": "normal", "mean": 0, "std": (2.0 / (co * k * k)) ** 0.5}
    levels = inverted_net(n, blocks, "L3_RELU6", 1280, "L3_RELU6",
                          [("features.0", "features.1"), ("features.%d" % idx, "features.%d" % (idx + 1))],
                          "classifier.1", init=kaiming, fc_init={"dist": "normal", "mean": 0, "std": 0.01})
    n.notes += ["Stem conv 3x3/2 BN ReLU6, 17 inverted-residual blocks (expand 1x1, depthwise 3x3, project 1x1,",
                "BN after each, training mode in double; no residual adds: KernelBench's blocks drop them), head",
                "1x1 conv to 1280 BN ReLU6, global average pool, Linear."]
    inverted_manifest(n, 20, "20_MobileNetV2",
                      "MobileNet v2 on x (B, 3, H, W): Conv2d(3, 32, 3, stride 2, padding 1, no bias), BatchNorm2d, "
                      "ReLU6, then 17 inverted-residual blocks from the setting (t, c, n, s) = (1, 16, 1, 1), (6, 24, 2, 2), "
                      "(6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1) (each: for t != 1 "
                      "Conv2d(c_in, t*c_in, 1) BN ReLU6; then the depthwise Conv2d(h, h, 3, stride, padding 1, groups "
                      "h) BN ReLU6; then Conv2d(h, c, 1) BN; no bias anywhere); KernelBench's module computes "
                      "use_res_connect but appends only the Sequential, so no block adds its input: none does here. "
                      "Then Conv2d(320, 1280, 1) BN ReLU6, adaptive average pool to 1x1, Dropout(0), Linear(1280, NC). "
                      "KernelBench's own initialisation: convolution weights normal(0, sqrt(2/fan_out)) (kaiming, "
                      "fan_out = out channels * k * k), BatchNorm ones and zeros, the Linear's weight normal(0, 0.01) "
                      "and bias zeros (varied by the checks).", "B = 10, H = W = 224, NC = 1000", levels,
                      {"B": 10, "H": 224, "W": 224, "NC": 1000},
                      {"globals": {"batch_size": "B"}, "init": ["NC"], "forward": ["x"]})
    return n


def p022():
    n = Net(22, "efficientnet_b0", "22_EfficientNetB0", "EfficientNet-B0")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    cfg = [(32, 16, 3, 1, 1), (16, 24, 3, 2, 6), (24, 24, 3, 1, 6), (24, 40, 5, 2, 6), (40, 40, 5, 1, 6),
           (40, 80, 3, 2, 6), (80, 80, 3, 1, 6), (80, 112, 5, 1, 6), (112, 112, 5, 1, 6), (112, 192, 5, 2, 6),
           (192, 192, 5, 1, 6), (192, 192, 5, 1, 6), (192, 320, 3, 1, 6)]
    blocks = []
    for k, (ci, co, K, s, e) in enumerate(cfg):
        f = "blocks.%d." % k
        keys = {"d": (f + "depthwise_conv.0", f + "depthwise_conv.1"), "p": (f + "project_conv.0", f + "project_conv.1")}
        if e != 1:
            keys["e"] = (f + "expand_conv.0", f + "expand_conv.1")
        blocks.append((ci, co, K, s, e, keys, s == 1 and ci == co, None))
    levels = inverted_net(n, blocks, "L3_RELU", 1280, "L3_RELU", [("conv1", "bn1"), ("conv2", "bn2")], "fc")
    n.notes += ["Stem conv 3x3/2 BN ReLU, 13 MBConv blocks (ReLU6; the input added where stride 1 and c_in = c_out),",
                "head 1x1 conv to 1280 BN ReLU, global average pool, Linear; BatchNorm in training mode in double."]
    inverted_manifest(n, 22, "22_EfficientNetB0",
                      "EfficientNet-B0 as KernelBench writes it on x (B, 3, H, W): Conv2d(3, 32, 3, stride 2, padding "
                      "1, no bias), BatchNorm2d, ReLU; 13 MBConv blocks (c_in, c_out, k, stride, expansion) = (32, 16, 3, "
                      "1, 1), (16, 24, 3, 2, 6), (24, 24, 3, 1, 6), (24, 40, 5, 2, 6), (40, 40, 5, 1, 6), (40, 80, 3, 2, "
                      "6), (80, 80, 3, 1, 6), (80, 112, 5, 1, 6), (112, 112, 5, 1, 6), (112, 192, 5, 2, 6), (192, 192, 5, "
                      "1, 6), (192, 192, 5, 1, 6), (192, 320, 3, 1, 6) (each: for expansion != 1 Conv2d 1x1 BN ReLU6; "
                      "depthwise Conv2d k x k, stride, padding (k-1)/2, BN ReLU6; Conv2d 1x1 BN; plus the input when "
                      "stride 1 and c_in = c_out; no bias); Conv2d(320, 1280, 1) BN ReLU, adaptive average pool, "
                      "Linear(1280, NC).", "B = 10, H = W = 224, NC = 1000", levels,
                      {"B": 10, "H": 224, "W": 224, "NC": 1000},
                      {"globals": {"batch_size": "B"}, "init": ["NC"], "forward": ["x"]})
    return n


def p023():
    n = Net(23, "efficientnet_b1", "23_EfficientNetB1", "EfficientNet-B1 (KernelBench's simplified form)")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    cfg = [(32, 16, 1, 1), (16, 24, 2, 6), (24, 40, 2, 6), (40, 80, 2, 6), (80, 112, 1, 6), (112, 192, 2, 6), (192, 320, 1, 6)]
    blocks = []
    for k, (ci, co, s, e) in enumerate(cfg, 1):
        f = "mbconv%d." % k
        blocks.append((ci, co, 3, s, e, {"e": (f + "0", f + "1"), "d": (f + "3", f + "4"), "p": (f + "6", f + "7")},
                       False, None))
    levels = inverted_net(n, blocks, "L3_RELU", 1280, "L3_RELU", [("conv1", "bn1"), ("conv2", "bn2")], "fc")
    n.notes += ["Stem conv 3x3/2 BN ReLU, 7 MBConv blocks (always with the 1x1 expansion, ReLU6, no residual), head",
                "1x1 conv to 1280 BN ReLU, global average pool, Linear; BatchNorm in training mode in double."]
    inverted_manifest(n, 23, "23_EfficientNetB1",
                      "KernelBench's EfficientNet-B1 on x (B, 3, H, W): Conv2d(3, 32, 3, stride 2, padding 1, no "
                      "bias), BatchNorm2d, ReLU; 7 blocks (c_in, c_out, stride, expansion) = (32, 16, 1, 1), (16, 24, 2, "
                      "6), (24, 40, 2, 6), (40, 80, 2, 6), (80, 112, 1, 6), (112, 192, 2, 6), (192, 320, 1, 6), each "
                      "Conv2d(c_in, h, 1) BN ReLU6 (h = c_in * expansion, also for expansion 1), depthwise Conv2d(h, h, "
                      "3, stride, padding 1, groups h) BN ReLU6, Conv2d(h, c_out, 1) BN, no residual, no bias; "
                      "Conv2d(320, 1280, 1) BN ReLU, adaptive average pool, Linear(1280, NC).",
                      "B = 10, H = W = 240, NC = 1000", levels,
                      {"B": 10, "H": 240, "W": 240, "NC": 1000},
                      {"globals": {"batch_size": "B", "input_shape": "(3, H, W)"}, "init": ["NC"], "forward": ["x"]})
    return n


def p024():
    n = Net(24, "efficientnet_b2", "24_EfficientNetB2", "EfficientNet-B2 (KernelBench's form, pooled inside the blocks)")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    cfg = [(32, 96, 1, 3), (96, 144, 2, 6), (144, 192, 2, 6), (192, 288, 2, 6), (288, 384, 1, 6)]
    blocks = []
    for k, (ci, co, s, e) in enumerate(cfg, 1):
        f = "mbconv%d." % k
        blocks.append((ci, co, 3, s, e, {"e": (f + "0", f + "1"), "d": (f + "3", f + "4"), "p": (f + "11", f + "12")},
                       False, (f + "7", f + "9")))
    levels = inverted_net(n, blocks, "L3_RELU", 1408, "L3_RELU", [("conv1", "bn1"), ("conv_final", "bn_final")], "fc",
                          se=True)
    n.notes += ["Stem conv 3x3/2 BN ReLU, 5 blocks (1x1 expansion BN ReLU, depthwise 3x3 BN ReLU, a global average",
                "pool, 1x1 conv ReLU, 1x1 conv sigmoid, 1x1 project BN: from the first block on the map is 1x1),",
                "head 1x1 conv BN ReLU, Linear; BatchNorm in training mode in double (over B values per channel)."]
    inverted_manifest(n, 24, "24_EfficientNetB2",
                      "KernelBench's EfficientNet-B2 on x (B, 3, H, W): Conv2d(3, 32, 3, stride 2, padding 1, no "
                      "bias), BatchNorm2d, ReLU; 5 blocks (c_in, c_out, stride, expansion) = (32, 96, 1, 3), (96, 144, "
                      "2, 6), (144, 192, 2, 6), (192, 288, 2, 6), (288, 384, 1, 6), each Conv2d(c_in, h, 1) BN ReLU (h = "
                      "c_in * expansion), depthwise Conv2d(h, h, 3, stride, padding 1, groups h) BN ReLU, "
                      "AdaptiveAvgPool2d(1), Conv2d(h, h/4, 1) ReLU, Conv2d(h/4, h, 1) Sigmoid, Conv2d(h, c_out, 1) BN "
                      "(a squeeze-excitation written as a sequence, not a product: from the first block's pool on, "
                      "the map is 1x1 and BatchNorm normalises over the batch alone), no bias; Conv2d(384, 1408, 1) "
                      "BN ReLU, adaptive average pool, Linear(1408, NC). Deviation: the batch is 16 to 32, not "
                      "KernelBench's 2: every BatchNorm after the first block's pool normalises B values per "
                      "channel, and over two it amplifies float32 rounding chaotically (a float32 network "
                      "differs from a float64 one by up to ~0.1 at B = 2; about 1e-4, the tolerance, still at "
                      "B = 8). Deviation: the tolerance is 2e-2, not 1e-4: the squeeze-excitation's sigmoid, "
                      "fed a pool over the whole map, barely varies across the batch, so each block's projection "
                      "BatchNorm normalises values whose spread is ~1e-3 of their size and amplifies rounding by "
                      "50-300 four times over; a float32 forward (and the reference's float32 activations) then "
                      "differ from a float64 one by up to 72x (1.9x) 1e-4 at 224 x 224 and 10-36x (0.2-6x) at the "
                      "alt and hidden sizes (a CPU emulation, tools/problems/emulate_level3.py), whatever the "
                      "batch.", "B = 2, H = W = 224, NC = 1000 (B = 32 here)",
                      levels, {"B": 32, "H": 224, "W": 224, "NC": 1000},
                      {"globals": {"batch_size": "B"}, "init": ["NC"], "forward": ["x"]}, hmin=8, bmin=16, bmax=32,
                      small={"B": 16, "H": 16, "W": 16, "NC": 3},
                      alt=[{"B": 17, "H": 45, "W": 67, "NC": 1}, {"B": 24, "H": 97, "W": 33, "NC": 97}], bn_values="B")
    n.manifest["tolerance"] = {
        "atol": 2e-2, "rtol": 2e-2,
        "why": "looser than KernelBench's 1e-4, measured: KernelBench's squeeze-excitation is a sequence (pool, "
               "1x1 ReLU, 1x1 sigmoid, 1x1 project, BatchNorm), not a product, so from the first block on the "
               "projection's BatchNorm sees values nearly constant across the batch (spread ~3e-4 of size ~0.1) "
               "and amplifies float32 rounding 50-300x, four blocks in a row. A CPU emulation "
               "(tools/problems/emulate_level3.py: float32 forward against float64) gives up to 72x 1e-4 at the "
               "default dims (3 seeds), 2.4-16x at small and alt, 1.7-36x at hidden sizes; 2e-2 keeps a 2.8x "
               "margin. The outputs are O(1), so a wrong stride, padding, missing layer or BatchNorm over the "
               "wrong axes is still off by far more"}
    return n


SPECS += [p020, p022, p023, p024]


# ---------------------------------------------------------------- 7, 18, 25, 26

def inception(n, pre, torch, x, y, B, ci, o1, r3, o3, r5, o5, pp, H, W):
    """KernelBench's InceptionModule (6 and 7): four branches, conv biases, no activation, cat."""
    ct, hw = o1 + o3 + o5 + pp, "(%s)*(%s)" % (H, W)
    b1 = n.conv_views(pre + "b1", o1, ci, 1, torch + "branch1x1")
    r3v = n.conv_views(pre + "b3r", r3, ci, 1, torch + "branch3x3.0")
    b3 = n.conv_views(pre + "b3", o3, r3, 3, torch + "branch3x3.1")
    r5v = n.conv_views(pre + "b5r", r5, ci, 1, torch + "branch5x5.0")
    b5 = n.conv_views(pre + "b5", o5, r5, 5, torch + "branch5x5.1")
    bp = n.conv_views(pre + "bp", pp, ci, 1, torch + "branch_pool.1")
    conv_bias_act(n, x, b1[0], b1[1], "o", "t", B, ci, o1, H, W, H, W, 1, 1, 0, act="L3_NONE")
    n.copy_channels("o", y, B, o1, hw, ct, 0)
    conv_bias_act(n, x, r3v[0], r3v[1], "r", "t", B, ci, r3, H, W, H, W, 1, 1, 0, act="L3_NONE")
    conv_bias_act(n, "r", b3[0], b3[1], "o", "t", B, r3, o3, H, W, H, W, 3, 1, 1, act="L3_NONE")
    n.copy_channels("o", y, B, o3, hw, ct, o1)
    conv_bias_act(n, x, r5v[0], r5v[1], "r", "t", B, ci, r5, H, W, H, W, 1, 1, 0, act="L3_NONE")
    conv_bias_act(n, "r", b5[0], b5[1], "o", "t", B, r5, o5, H, W, H, W, 5, 1, 2, act="L3_NONE")
    n.copy_channels("o", y, B, o5, hw, ct, o1 + o3)
    n.maxpool(x, "r", "%s*%d" % (B, ci), H, W, H, W, 3, 1, 1)
    conv_bias_act(n, "r", bp[0], bp[1], "o", "t", B, ci, pp, H, W, H, W, 1, 1, 0, act="L3_NONE")
    n.copy_channels("o", y, B, pp, hw, ct, o1 + o3 + o5)
    return ct


def p007():
    n = Net(7, "googlenet_inception_v1", "7_GoogleNetInceptionV1", "GoogLeNet (Inception v1)")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    big = "B*max(max(64*S1H*S1W, 192*S2H*S2W), max(480*S3H*S3W, max(832*S4H*S4W, 1024*S5H*S5W)))"
    for b in ("p", "q", "t", "r", "o"):
        n.buf(b, big)
    n.buf("acc", "B*NC", "f64")
    c1 = n.conv_views("conv1", 64, 3, 7, "conv1")
    c2 = n.conv_views("conv2", 64, 64, 1, "conv2")
    c3 = n.conv_views("conv3", 192, 64, 3, "conv3")
    conv_bias_act(n, "x", c1[0], c1[1], "p", "t", "B", 3, 64, "H", "W", "S1H", "S1W", 7, 2, 3)
    n.maxpool("p", "q", "B*64", "S1H", "S1W", "S2H", "S2W", 3, 2, 1)
    conv_bias_act(n, "q", c2[0], c2[1], "p", "t", "B", 64, 64, "S2H", "S2W", "S2H", "S2W", 1, 1, 0)
    conv_bias_act(n, "p", c3[0], c3[1], "q", "t", "B", 64, 192, "S2H", "S2W", "S2H", "S2W", 3, 1, 1)
    n.maxpool("q", "p", "B*192", "S2H", "S2W", "S3H", "S3W", 3, 2, 1)
    mods = [("3a", 192, 64, 96, 128, 16, 32, 32, 3), ("3b", 256, 128, 128, 192, 32, 96, 64, 3), "pool",
            ("4a", 480, 192, 96, 208, 16, 48, 64, 4), ("4b", 512, 160, 112, 224, 24, 64, 64, 4),
            ("4c", 512, 128, 128, 256, 24, 64, 64, 4), ("4d", 512, 112, 144, 288, 32, 64, 64, 4),
            ("4e", 528, 256, 160, 320, 32, 128, 128, 4), "pool",
            ("5a", 832, 256, 160, 320, 32, 128, 128, 5), ("5b", 832, 384, 192, 384, 48, 128, 128, 5)]
    cur, other, c, lv = "p", "q", 192, 3
    for m in mods:
        if m == "pool":
            n.maxpool(cur, other, "B*%d" % c, "S%dH" % lv, "S%dW" % lv, "S%dH" % (lv + 1), "S%dW" % (lv + 1), 3, 2, 1)
            cur, other, lv = other, cur, lv + 1
            continue
        name, ci, o1, r3, o3, r5, o5, pp, _ = m
        c = inception(n, "i%s_" % name, "inception%s." % name, cur, other, "B", ci, o1, r3, o3, r5, o5, pp,
                      "S%dH" % lv, "S%dW" % lv)
        cur, other = other, cur
    n.row_mean(cur, other, "B*1024", "S5H*S5W")
    fw, fb = n.linear_views("fc", "NC", 1024, "fc")
    n.linear(other, fw, fb, "y", "B", "NC", 1024)
    n.notes += ["conv 7x7/2 ReLU, max pool, conv 1x1 ReLU, conv 3x3 ReLU, max pool, nine inception modules (four",
                "branches each, biases in double, concatenated) with two max pools, global average pool, Linear."]
    derived = {}
    for d in ("H", "W"):
        derived["S1" + d] = "(%s - 1)/2 + 1" % d
        for i in range(2, 6):
            derived["S%d%s" % (i, d)] = "(S%d%s - 1)/2 + 1" % (i - 1, d)
    n.manifest = {
        "description": "KernelBench level 3, problem 7 (7_GoogleNetInceptionV1): GoogLeNet on x (B, 3, H, W): "
                       "Conv2d(3, 64, 7, stride 2, padding 3), ReLU, MaxPool2d(3, stride 2, padding 1), Conv2d(64, "
                       "64, 1), ReLU, Conv2d(64, 192, 3, padding 1), ReLU, max pool 3/2/1, inception modules 3a "
                       "(192: 64, 96->128, 16->32, 32), 3b (256: 128, 128->192, 32->96, 64), max pool, 4a (480: 192, "
                       "96->208, 16->48, 64), 4b (512: 160, 112->224, 24->64, 64), 4c (512: 128, 128->256, 24->64, 64), "
                       "4d (512: 112, 144->288, 32->64, 64), 4e (528: 256, 160->320, 32->128, 128), max pool, 5a (832: "
                       "256, 160->320, 32->128, 128), 5b (832: 384, 192->384, 48->128, 128), adaptive average pool, "
                       "Dropout(0), Linear(1024, NC). An inception module is problem 6's: branches 1x1; 1x1 then 3x3 "
                       "(padding 1); 1x1 then 5x5 (padding 2); max pool 3/1/1 then 1x1; all convolutions with bias and "
                       "no activation inside the modules; concatenated on the channels. Every halving is (n - 1)/2 + "
                       "1. KernelBench's sizes B = 10, H = W = 224, NC = 1000. " + COMMON + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B"}, "init": ["NC"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "H": 224, "W": 224, "NC": 1000},
                 "small": {"B": 1, "H": 32, "W": 32, "NC": 3},
                 "alt": [{"B": 3, "H": 45, "W": 67, "NC": 1}, {"B": 2, "H": 97, "W": 33, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "H": {"min": 1, "max": 160},
                            "W": {"min": 1, "max": 160}, "NC": {"min": 1, "max": 1000}},
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 4, any image size from 1 (odd sizes halve with "
                          "rounding up; the paddings and the pools' -inf borders everywhere), any class count"},
        "values": values(64, CONV_STRUCT_WHY % 64),
        "tolerance": cnn_tolerance("57 convolutions, up to 4 deep between pools (no normalisation), and a Linear layer"),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    p = n.manifest["description"]
    return n


def p018():
    n = Net(18, "squeezenet", "18_SqueezeNet", "SqueezeNet 1.0")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    big = "B*96*S1H*S1W"
    for b in ("p", "q", "t", "s", "o"):
        n.buf(b, big)
    c1 = n.conv_views("conv1", 96, 3, 7, "features.0")
    conv_bias_act(n, "x", c1[0], c1[1], "p", "t", "B", 3, 96, "H", "W", "S1H", "S1W", 7, 2, 0)
    n.maxpool("p", "q", "B*96", "S1H", "S1W", "S2H", "S2W", 3, 2, 0)
    fires = [(3, 96, 16, 64, 64), (4, 128, 16, 64, 64), (5, 128, 32, 128, 128), "pool",
             (7, 256, 32, 128, 128), (8, 256, 48, 192, 192), (9, 384, 48, 192, 192), (10, 384, 64, 256, 256), "pool",
             (12, 512, 64, 256, 256)]
    cur, other, lv, c = "q", "p", 2, 96
    for f in fires:
        if f == "pool":
            n.maxpool(cur, other, "B*%d" % c, "S%dH" % lv, "S%dW" % lv, "S%dH" % (lv + 1), "S%dW" % (lv + 1), 3, 2, 0)
            cur, other, lv = other, cur, lv + 1
            continue
        idx, ci, sq, e1, e3 = f
        h, w = "S%dH" % lv, "S%dW" % lv
        sv = n.conv_views("f%d_sq" % idx, sq, ci, 1, "features.%d.squeeze" % idx)
        e1v = n.conv_views("f%d_e1" % idx, e1, sq, 1, "features.%d.expand1x1" % idx)
        e3v = n.conv_views("f%d_e3" % idx, e3, sq, 3, "features.%d.expand3x3" % idx)
        conv_bias_act(n, cur, sv[0], sv[1], "s", "t", "B", ci, sq, h, w, h, w, 1, 1, 0)
        conv_bias_act(n, "s", e1v[0], e1v[1], "o", "t", "B", sq, e1, h, w, h, w, 1, 1, 0)
        n.copy_channels("o", other, "B", e1, "(%s)*(%s)" % (h, w), e1 + e3, 0)
        conv_bias_act(n, "s", e3v[0], e3v[1], "o", "t", "B", sq, e3, h, w, h, w, 3, 1, 1)
        n.copy_channels("o", other, "B", e3, "(%s)*(%s)" % (h, w), e1 + e3, e1)
        cur, other, c = other, cur, e1 + e3
    cv = n.conv_views("cls", "NC", 512, 1, "classifier.1")
    n.buf("z", "B*NC*S4H*S4W")
    conv_bias_act(n, cur, cv[0], cv[1], "z", "t", "B", 512, "NC", "S4H", "S4W", "S4H", "S4W", 1, 1, 0)
    n.row_mean("z", "y", "B*NC", "S4H*S4W")
    n.notes += ["conv 7x7/2 ReLU, three 3x3/2 max pools in ceil mode (windows clipped at the border), eight fire",
                "modules (squeeze 1x1 ReLU, expand 1x1 and 3x3 ReLU, concatenated), classifier 1x1 conv ReLU,",
                "global average pool; biases and ReLU in double."]
    derived = {}
    for d in ("H", "W"):
        derived["S1" + d] = "(%s - 7)/2 + 1" % d
        for i in range(2, 5):
            derived["S%d%s" % (i, d)] = "cdiv(S%d%s - 3, 2) + 1" % (i - 1, d)
    n.manifest = {
        "description": "KernelBench level 3, problem 18 (18_SqueezeNet): SqueezeNet 1.0 on x (B, 3, H, W): Conv2d(3, "
                       "96, 7, stride 2), ReLU, MaxPool2d(3, stride 2, ceil_mode=True), fire modules (in: squeeze, "
                       "expand1x1, expand3x3) (96: 16, 64, 64), (128: 16, 64, 64), (128: 32, 128, 128), max pool 3/2 "
                       "ceil, (256: 32, 128, 128), (256: 48, 192, 192), (384: 48, 192, 192), (384: 64, 256, 256), max "
                       "pool 3/2 ceil, (512: 64, 256, 256), then Dropout(0), Conv2d(512, NC, 1), ReLU, adaptive "
                       "average pool to 1x1, flatten. A fire module is problem 17's (squeeze 1x1 ReLU, then expand "
                       "1x1 ReLU and expand 3x3 (padding 1) ReLU concatenated); every convolution has a bias. Ceil "
                       "mode: a pool over n gives ceil((n - 3)/2) + 1, its last window clipped at the border. "
                       "KernelBench's sizes B = 64, H = W = 512, NC = 1000. " + COMMON + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B"}, "init": ["NC"], "forward": ["x"]},
        "dims": {"default": {"B": 64, "H": 512, "W": 512, "NC": 1000},
                 "small": {"B": 1, "H": 31, "W": 32, "NC": 3},
                 "alt": [{"B": 3, "H": 45, "W": 68, "NC": 1}, {"B": 2, "H": 97, "W": 33, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 6}, "H": {"min": 23, "max": 256},
                            "W": {"min": 23, "max": 256}, "NC": {"min": 1, "max": 1000}},
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 6, images of 23 to 256 (every ceil-mode pool "
                          "clips a window at odd and even sizes; 23 keeps the last map at least 1x1), any class count"},
        "values": values(64, CONV_STRUCT_WHY % 64),
        "tolerance": cnn_tolerance("26 convolutions, up to 3 deep between pools, with biases and ReLU"),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    return n


def shuffle_unit(n, pre, torch, x, y, B, ci, co, G, H, W):
    """KernelBench's ShuffleNetUnit (25, 26): relu(bn1(gconv1x1)), bn2(dwconv3x3), channel shuffle,
    relu(bn3(gconv1x1)), plus the shortcut (identity when ci == co, else conv1x1 BN) added after
    the ReLU. Scratch a, b, t, d."""
    mid = co // 4
    hw = "(%s)*(%s)" % (H, W)
    w1 = n.conv_views(pre + "c1", mid, ci, 1, torch + "conv1", bias=False, groups=G)[0]
    g1 = n.bn_views(pre + "bn1", mid, torch + "bn1")
    w2 = n.conv_views(pre + "c2", mid, 1, 3, torch + "conv2", bias=False)[0]
    g2 = n.bn_views(pre + "bn2", mid, torch + "bn2")
    w3 = n.conv_views(pre + "c3", co, mid, 1, torch + "conv3", bias=False, groups=G)[0]
    g3 = n.bn_views(pre + "bn3", co, torch + "bn3")
    conv_bn(n, x, w1, g1[0], g1[1], "a", "t", B, ci, mid, H, W, H, W, 1, 1, 0, G=G)
    conv_bn(n, "a", w2, g2[0], g2[1], "b", "t", B, mid, mid, H, W, H, W, 3, 1, 1, act="L3_NONE", G=mid)
    n.channel_shuffle("b", "a", B, mid, hw, G)
    conv_bn(n, "a", w3, g3[0], g3[1], "b", "t", B, mid, co, H, W, H, W, 1, 1, 0, G=G)
    res = x
    if ci != co:
        ws = n.conv_views(pre + "sc", co, ci, 1, torch + "shortcut.0", bias=False)[0]
        gs = n.bn_views(pre + "sbn", co, torch + "shortcut.1")
        conv_bn(n, x, ws, gs[0], gs[1], "d", "t", B, ci, co, H, W, H, W, 1, 1, 0, act="L3_NONE")
        res = "d"
    n.bias_act("b", None, y, "(%s)*%d*%s" % (B, co, hw), 1, co, res=res)


def p026():
    n = Net(26, "shufflenet", "26_ShuffleNet", "ShuffleNet (groups 3)")
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    big = "B*1024*S2H*S2W"
    for b in ("p", "q", "a", "b", "t", "d"):
        n.buf(b, big)
    n.buf("stats", "2*1024", "f64")
    n.buf("acc", "B*NC", "f64")
    w1 = n.conv_views("conv1", 24, 3, 3, "conv1", bias=False)[0]
    g1 = n.bn_views("bn1", 24, "bn1")
    conv_bn(n, "x", w1, g1[0], g1[1], "p", "t", "B", 3, 24, "H", "W", "S1H", "S1W", 3, 2, 1)
    n.maxpool("p", "q", "B*24", "S1H", "S1W", "S2H", "S2W", 3, 2, 1)
    cur, other, ci = "q", "p", 24
    for st, (co, reps) in enumerate([(240, 3), (480, 7), (960, 3)], 2):
        for u in range(reps):
            shuffle_unit(n, "s%d_%d_" % (st, u), "stage%d.%d." % (st, u), cur, other, "B", ci, co, 3, "S2H", "S2W")
            cur, other, ci = other, cur, co
    w5 = n.conv_views("conv5", 1024, 960, 1, "conv5", bias=False)[0]
    g5 = n.bn_views("bn5", 1024, "bn5")
    conv_bn(n, cur, w5, g5[0], g5[1], other, "t", "B", 960, 1024, "S2H", "S2W", "S2H", "S2W", 1, 1, 0)
    n.row_mean(other, cur, "B*1024", "S2H*S2W")
    fw, fb = n.linear_views("fc", "NC", 1024, "fc")
    n.linear(cur, fw, fb, "y", "B", "NC", 1024)
    n.notes += ["conv 3x3/2 BN ReLU, max pool 3/2/1, 13 ShuffleNet units (group 1x1 conv BN ReLU, depthwise 3x3 BN,",
                "channel shuffle, group 1x1 conv BN ReLU, plus the shortcut), conv 1x1 BN ReLU, global average pool,",
                "Linear; BatchNorm in training mode in double."]
    derived = {}
    for d in ("H", "W"):
        derived["S1" + d] = "(%s - 1)/2 + 1" % d
        derived["S2" + d] = "(S1%s - 1)/2 + 1" % d
    n.manifest = {
        "description": "KernelBench level 3, problem 26 (26_ShuffleNet): ShuffleNet (groups 3) on x (B, 3, H, W): "
                       "Conv2d(3, 24, 3, stride 2, padding 1, no bias), BatchNorm2d, ReLU, MaxPool2d(3, stride 2, "
                       "padding 1), stages of 3, 7 and 3 ShuffleNet units with 240, 480 and 960 output channels (a "
                       "unit is problem 25's, always stride 1, so every unit runs at the pooled size), Conv2d(960, "
                       "1024, 1, no bias), BatchNorm2d, ReLU, adaptive average pool, Linear(1024, NC). Each halving "
                       "is (n - 1)/2 + 1. KernelBench's sizes B = 10, H = W = 224, NC = 1000. " + COMMON +
                       X_NOTE + "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B"}, "init": ["NC"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "H": 224, "W": 224, "NC": 1000},
                 "small": {"B": 4, "H": 8, "W": 7, "NC": 3},
                 "alt": [{"B": 3, "H": 45, "W": 17, "NC": 1}, {"B": 2, "H": 33, "W": 65, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "H": {"min": 1, "max": 128},
                            "W": {"min": 1, "max": 128}, "NC": {"min": 1, "max": 1000}},
                   "require": [bn_require("B*S2H*S2W")],
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 4, any image size from 1 (odd sizes halve with "
                          "rounding up), any class count; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("About 45 convolutions with training-mode BatchNorm and a Linear layer"),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    check_bn_values(n, "B*S2H*S2W")
    return n


SPECS += [p007, p018, p026]


def p025():
    n = Net(25, "shufflenet_unit", "25_ShuffleNetUnit", "ShuffleNet unit")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "CO", "H", "W"])
    for b in ("a", "b", "t", "d"):
        n.buf(b, "B*CO*H*W")
    n.buf("stats", "2*CO", "f64")
    w1 = n.conv_views("c1", "CO/4", "CI", 1, "conv1", bias=False, groups="G")[0]
    g1 = n.bn_views("bn1", "CO/4", "bn1")
    w2 = n.conv_views("c2", "CO/4", 1, 3, "conv2", bias=False)[0]
    g2 = n.bn_views("bn2", "CO/4", "bn2")
    w3 = n.conv_views("c3", "CO", "CO/4", 1, "conv3", bias=False, groups="G")[0]
    g3 = n.bn_views("bn3", "CO", "bn3")
    ws = n.conv_views("sc", "CO", "CI", 1, "shortcut.0", bias=False)[0]
    gs = n.bn_views("sbn", "CO", "shortcut.1")
    conv_bn(n, "x", w1, g1[0], g1[1], "a", "t", "B", "CI", "CO/4", "H", "W", "H", "W", 1, 1, 0, G="G")
    conv_bn(n, "a", w2, g2[0], g2[1], "b", "t", "B", "CO/4", "CO/4", "H", "W", "H", "W", 3, 1, 1, act="L3_NONE", G="CO/4")
    n.channel_shuffle("b", "a", "B", "CO/4", "H*W", "G")
    conv_bn(n, "a", w3, g3[0], g3[1], "b", "t", "B", "CO/4", "CO", "H", "W", "H", "W", 1, 1, 0, G="G")
    conv_bn(n, "x", ws, gs[0], gs[1], "d", "t", "B", "CI", "CO", "H", "W", "H", "W", 1, 1, 0, act="L3_NONE")
    n.bias_act("b", None, "y", "B*CO*H*W", 1, "CO", res="d")
    n.notes += ["group 1x1 conv BN ReLU, depthwise 3x3 BN, channel shuffle, group 1x1 conv BN ReLU, plus the 1x1",
                "conv BN shortcut added after that ReLU; BatchNorm in training mode in double."]
    n.manifest = {
        "description": "KernelBench level 3, problem 25 (25_ShuffleNetUnit): a ShuffleNet unit on x (B, CI, H, W) with "
                       "M = CO/4: out = ReLU(BN(Conv2d(CI, M, 1, groups G))), out = BN(Conv2d(M, M, 3, padding 1, groups "
                       "M)), channel shuffle (view (B, G, M/G, H, W), swap dims 1 and 2, flatten back), out = "
                       "ReLU(BN(Conv2d(M, CO, 1, groups G))), then out + shortcut(x) with shortcut = BN(Conv2d(CI, CO, "
                       "1)) (KernelBench uses the identity when CI == CO; every dims set here has CI != CO); no bias, "
                       "no activation after the add. KernelBench's sizes B = 10, CI = 240, CO = 480, G = 3, H = W = "
                       "224. " + COMMON + X_NOTE + "Output y (B, CO, H, W).",
        "torch_model": {"globals": {"batch_size": "B", "input_channels": "CI", "out_channels": "CO", "groups": "G"},
                        "init": ["CI", "CO", "G"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 240, "CO": 480, "G": 3, "H": 224, "W": 224},
                 "small": {"B": 2, "CI": 6, "CO": 12, "G": 3, "H": 5, "W": 4},
                 "alt": [{"B": 3, "CI": 10, "CO": 40, "G": 2, "H": 31, "W": 1}, {"B": 1, "CI": 3, "CO": 24, "G": 1, "H": 33, "W": 65}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 8}, "CI": {"min": 1, "max": 96}, "CO": {"min": 4, "max": 192},
                            "G": {"values": [1, 2, 3, 4]}, "H": {"min": 1, "max": 96}, "W": {"min": 1, "max": 96}},
                   "require": ["CO % (4*G) == 0", "CI % G == 0", "CI != CO", bn_require("B*H*W")],
                   "why": "any batch, image size, group count 1-4 and channel counts the groups divide (CO/4 "
                          "too: the shuffle and the grouped convolutions), off the 16-channel blocks; CI != CO keeps "
                          "the convolution shortcut; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("Four convolutions (up to CI/G terms) with training-mode BatchNorm"),
        "bytes": "4*(B*CI*H*W + %s + B*CO*H*W)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    check_bn_values(n, "B*H*W")
    return n


SPECS += [p025]


def p031():
    n = Net(31, "vision_attention", "31_VisionAttention", "Multi-head self-attention over an image's positions, LayerNorm")
    n.input("x", ["B", "C", "H", "W"])
    n.output("y", ["B", "C", "H", "W"])
    wi = n.view("in_w", ["3*C", "C"], fan_in("2*C/3"), "attn.in_proj_weight")
    bi = n.view("in_b", ["3*C"], {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}},
                "attn.in_proj_bias")
    wo = n.view("out_w", ["C", "C"], fan_in("C"), "attn.out_proj.weight")
    bo = n.view("out_b", ["C"], {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}},
                "attn.out_proj.bias")
    lg = n.view("ln_g", ["C"], {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}, "norm.weight")
    lb = n.view("ln_b", ["C"], {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}}, "norm.bias")
    S = "H*W"
    n.buf("xt", "B*H*W*C")
    n.buf("qkv", "B*H*W*3*C")
    for b in ("q", "k", "v", "ya", "z"):
        n.buf(b, "B*H*W*C")
    n.buf("s", "H*W*H*W", "f64")
    n.buf("yh", "B*H*W*C", "f64")
    n.buf("acc", "B*H*W*3*C", "f64")
    n.transpose("x", "xt", "B", "C", S)
    n.linear("xt", wi, bi, "qkv", "B*H*W", "3*C", "C")
    n.full_attention("qkv", "ya", "B", S, "C", "NH")
    n.linear("ya", wo, bo, "z", "B*H*W", "C", "C", res="xt")
    n.layernorm("z", lg, lb, "v", "B*H*W", "C")
    n.transpose("v", "y", "B", S, "C")
    n.notes += ["x (B, C, H*W) transposed to (B, H*W, C); in-projection (FP64 tensor cores), one (batch, head) at a",
                "time: scores in double, softmax in double, values; out-projection plus x, LayerNorm, transposed back."]
    n.manifest = {
        "description": "KernelBench level 3, problem 31 (31_VisionAttention): nn.MultiheadAttention(C, NH) over the H*W "
                       "positions of x (B, C, H, W) as a sequence (x.view(B, C, H*W).permute(2, 0, 1)), keys = queries "
                       "= values, no mask: q, k, v = x W_in^T + b_in split in three, NH heads of C/NH, softmax(q k^T / "
                       "sqrt(C/NH)) v, heads side by side, out_proj = Linear(C, C); then LayerNorm(C) (eps 1e-5) of "
                       "attention output + x, permuted back to (B, C, H, W). KernelBench's sizes B = 2, C = 128, NH "
                       "= 4, H = W = 128. Parameters as nn.MultiheadAttention initialises them: in_proj_weight xavier "
                       "uniform, bound sqrt(6/(C + 3C)) = 1/sqrt(2C/3) (written uniform_fan_in with fan_in 2*C/3, "
                       "rounded down), in_proj_bias and out_proj.bias zeros, out_proj.weight uniform(-1/sqrt(C), "
                       "1/sqrt(C)); LayerNorm ones and zeros (zeros and ones varied by the checks). " +
                       COMMON.split("Every module parameter")[0] + "Every module parameter is an input, packed into "
                       "`params`. " + X_NOTE + "Output y (B, C, H, W).",
        "torch_model": {"globals": {"batch_size": "B", "embed_dim": "C", "num_heads": "NH", "num_channels": "C",
                                    "image_height": "H", "image_width": "W"},
                        "init": ["C", "NH"], "forward": ["x"]},
        "dims": {"default": {"B": 2, "C": 128, "NH": 4, "H": 128, "W": 128},
                 "small": {"B": 2, "C": 6, "NH": 2, "H": 3, "W": 2},
                 "alt": [{"B": 3, "C": 36, "NH": 3, "H": 7, "W": 9}, {"B": 1, "C": 7, "NH": 7, "H": 1, "W": 65}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "C": {"min": 2, "max": 192}, "NH": {"divisor_of": "C"},
                            "H": {"min": 1, "max": 32}, "W": {"min": 1, "max": 32}},
                   "require": ["NH <= 32", "2*C/3 >= 1"],
                   "why": "any batch, width and head count that divides it (head sizes 1 to C), sequences of 1 to "
                          "1024 positions (one (batch, head) of double scores at a time); the products' 64x64 tiles "
                          "are masked at every edge"},
        "values": values(64, ATT_STRUCT_WHY % 64, large_why=ATT_LARGE_WHY),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. LayerNorm makes the output O(1); the projections sum C "
                             "= 128 products and the attention averages H*W = 16384 values, which float32 sums to "
                             "~1e-6 relative, inside 1e-4; TF32 products fail"},
        "bytes": "4*(2*B*C*H*W + %s)" % n.params_numel(),
        "flops": "2*B*H*W*4*C*C + 4*B*H*W*H*W*C",
    }
    return n


SPECS += [p031]


def netvlad(num, name, kb_name, title, ghost):
    n = Net(num, name, kb_name, title)
    D = 512
    KG = "K + G" if ghost else "K"
    n.input("x", ["B", "N", D])
    n.output("y", ["B", "%d*K" % D])
    std = round(1 / D ** 0.5, 17)
    c1 = n.view("clusters", [D, KG], {"dist": "normal", "mean": 0, "std": std}, "clusters")
    g, b = n.bn_views("bn", KG, "batch_norm")
    c2 = n.view("clusters2", [1, D, "K"], {"dist": "normal", "mean": 0, "std": std}, "clusters2")
    n.buf("acc", "B*N*(%s)" % KG, "f64")
    n.buf("af", "B*N*(%s)" % KG)
    n.buf("ab", "B*N*(%s)" % KG)
    n.buf("as", "B*N*K")
    n.buf("stats", "2*(%s)" % KG, "f64")
    n.buf("v", "B*%d*K" % D, "f64")
    n.product_nn("x", c1, "acc", "B*N", KG, D)
    n.launch("l3_bias_act_d<<<%s, 256>>>(acc, 0, 0, af, B*N*(%s), 1, %s, 0)" % ("min(cdiv(B*N*(%s), 256), 65536)" % KG, KG, KG))
    n.bn("af", "stats", g, b, "ab", "B*N", KG, 1, act="L3_NONE")
    n.launch("l3_softmax_rows<<<min(cdiv(B*N, 8), 65536), 256>>>(ab, as, B*N, %s, K)" % KG)
    n.launch("l3_vlad<<<min(cdiv(B*%d*K, 256), 65536), 256>>>(as, x, clusters2, v, B, N, %d, K)" % (D, D))
    n.launch("l3_vlad_normalize<<<min(B, 65535), 256, 8*K>>>(v, y, B, %d, K)" % D)
    n.count(1, ["B", "N", "K", D])
    n.notes += ["assignment = x clusters (FP64 tensor cores), BatchNorm1d in training mode and the softmax in double,",
                "the residual aggregation and both normalisations in double."]
    gtxt = ("K + G clusters (G ghost clusters, dropped after the softmax)" if ghost else "K clusters (no ghost clusters)")
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): NetVLAD on x (B, N, D) with D = 512 and %s: assignment = "
                       "x.view(B*N, D) @ clusters (D, %s), BatchNorm1d over the B*N rows (training mode), softmax over "
                       "the clusters, the first K columns kept, viewed (B, N, K); a_sum = sum over N, a = a_sum * "
                       "clusters2 (1, D, K); vlad = (assignment^T x)^T (B, D, K) - a; F.normalize over D (dim 1, eps "
                       "1e-12), flattened to (B, D*K), F.normalize again. clusters and clusters2 are N(0, 1/sqrt(D)) "
                       "(KernelBench's init_sc * randn), BatchNorm ones and zeros (varied by the checks). "
                       "KernelBench's sizes B = 2048, N = 100, K = 32%s, D = 512 (fixed here). "
                       % (num, kb_name, gtxt, KG, ", G = 16" if ghost else "") +
                       COMMON.split("Every module parameter")[0] + "Every module parameter is an input, packed into "
                       "`params`. The input x is N(0, 1) (KernelBench draws torch.rand). Output y (B, 512*K).",
        "torch_model": {"globals": {"batch_size": "B", "num_features": "N", "num_clusters": "K", "feature_size": "512",
                                    "ghost_clusters": "G" if ghost else "0"},
                        "init": ["K", "512", "G" if ghost else "0"], "forward": ["x"]},
        "dims": {"default": dict({"B": 2048, "N": 100, "K": 32}, **({"G": 16} if ghost else {})),
                 "small": dict({"B": 2, "N": 8, "K": 2}, **({"G": 1} if ghost else {})),
                 "alt": [dict({"B": 3, "N": 33, "K": 5}, **({"G": 7} if ghost else {})),
                         dict({"B": 8, "N": 2, "K": 65}, **({"G": 2} if ghost else {}))]},
        "hidden": {"dims": dict({"B": {"min": 1, "max": 96}, "N": {"min": 1, "max": 160}, "K": {"min": 1, "max": 80}},
                                **({"G": {"min": 1, "max": 24}} if ghost else {})),
                   "require": [bn_require("B*N")],
                   "why": "any batch, feature count and cluster counts%s (the 64x64 product tiles masked at every edge, "
                          "a warp per softmax row); %s (BatchNorm1d over the B*N rows)"
                          % (" with any number of ghost clusters" if ghost else "", BN_WHY)},
        "values": values(64, "the scaled input and cluster views (per-row and per-column scales up to 8x) scale the "
                         "assignment logits, which BatchNorm renormalises per cluster, and the aggregation, which the "
                         "normalisations divide out; atol x64 for the sums that cancel (an estimate, to be calibrated "
                         "on the H100); no spikes",
                         large_why="BatchNorm before the softmax and the two normalisations make the output invariant "
                                   "to the input's scale; the structured runs scale rows and columns"),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. The output is normalised (each of its 512*K entries "
                             "O(1/sqrt(512 K)) ~ 0.008); float32 sums of 512 products and of N = 100 weighted "
                             "features err by ~1e-6 relative, inside 1e-4"},
        "bytes": "4*(B*N*512 + %s + B*512*K)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    check_bn_values(n, "B*N")
    return n


def p046():
    return netvlad(46, "netvlad_ghost_clusters", "46_NetVladWithGhostClusters", "NetVLAD with ghost clusters", True)


def p047():
    return netvlad(47, "netvlad_no_ghost_clusters", "47_NetVladNoGhostClusters", "NetVLAD without ghost clusters", False)


SPECS += [p046, p047]


def p045():
    n = Net(45, "unet_softmax", "45_UNetSoftmax", "UNet with softmax in place of ReLU")
    n.input("x", ["B", "CI", "H", "W"])
    n.output("y", ["B", "CO", "H", "W"])
    big = "B*128*H*W"
    for b in ("p", "q", "t", "u", "c"):
        n.buf(b, big)
    for i in range(4):
        n.buf("e%d" % (i + 1), "B*%d*H*W/%d" % (64 * 2 ** i, 4 ** i))
    n.buf("stats", "2*1024", "f64")

    def dconv(pre, torch, x, y, ci, co, h, w):
        """DoubleConv: (conv3x3 with bias, BatchNorm, softmax over W) twice."""
        w1, b1 = n.conv_views(pre + "c1", co, ci, 3, torch + ".double_conv.0")
        g1 = n.bn_views(pre + "bn1", co, torch + ".double_conv.1")
        w2, b2 = n.conv_views(pre + "c2", co, co, 3, torch + ".double_conv.3")
        g2 = n.bn_views(pre + "bn2", co, torch + ".double_conv.4")
        conv_bias_bn(n, x, w1, b1, g1[0], g1[1], "p", "t", "u", "B", ci, co, h, w, h, w, 3, 1, 1, act="L3_NONE")
        n.softmax_rows("p", "q", "B*(%s)*(%s)" % (co, h), w)
        conv_bias_bn(n, "q", w2, b2, g2[0], g2[1], "p", "t", "u", "B", co, co, h, w, h, w, 3, 1, 1, act="L3_NONE")
        n.softmax_rows("p", y, "B*(%s)*(%s)" % (co, h), w)

    sizes = [("H", "W"), ("H/2", "W/2"), ("H/4", "W/4"), ("H/8", "W/8"), ("H/16", "W/16")]
    chans = [64, 128, 256, 512, 1024]
    src, ci = "x", "CI"
    for lv in range(4):
        h, w = sizes[lv]
        dconv("enc%d_" % (lv + 1), "encoder%d" % (lv + 1), src, "e%d" % (lv + 1), ci, chans[lv], h, w)
        n.maxpool("e%d" % (lv + 1), "c", "B*%d" % chans[lv], h, w, sizes[lv + 1][0], sizes[lv + 1][1], 2, 2)
        src, ci = "c", chans[lv]
    # the bottleneck reads c (pooled e4); its DoubleConv writes into c after reading it through p/q
    dconv("bott_", "bottleneck", "c", "c", chans[3], chans[4], sizes[4][0], sizes[4][1])
    cur = "c"
    for lv in range(3, -1, -1):
        h, w = sizes[lv]
        hc, wc = sizes[lv + 1]
        uw, ub = n.view("up%d_w" % (lv + 1), [chans[lv + 1], chans[lv], 2, 2], fan_in(chans[lv] * 4),
                        "upconv%d.weight" % (lv + 1)), \
            n.view("up%d_b" % (lv + 1), [chans[lv]], fan_in(chans[lv] * 4), "upconv%d.bias" % (lv + 1))
        n.upconv2x2(cur, uw, ub, "t", "B", chans[lv + 1], chans[lv], hc, wc)
        # the concatenation (upconv output, then the encoder's) in buffer c, then the decoder into c
        n.copy_channels("t", "c", "B", chans[lv], "(%s)*(%s)" % (h, w), 2 * chans[lv], 0)
        n.copy_channels("e%d" % (lv + 1), "c", "B", chans[lv], "(%s)*(%s)" % (h, w), 2 * chans[lv], chans[lv])
        dconv("dec%d_" % (lv + 1), "decoder%d" % (lv + 1), "c", "c", 2 * chans[lv], chans[lv], h, w)
        cur = "c"
    fw, fb = n.conv_views("final", "CO", 64, 1, "final_conv")
    conv_bias_act(n, "c", fw, fb, "y", "t", "B", 64, "CO", "H", "W", "H", "W", 1, 1, 0, act="L3_NONE")
    n.notes += ["Four encoder DoubleConvs (conv 3x3 with bias, BatchNorm in training mode, softmax over W, twice)",
                "with 2x2 max pools, the bottleneck, four decoders (ConvTranspose2d 2x2/2 with bias, concatenated",
                "with the encoder's output), final 1x1 conv; everything summed in double, rounded once per layer."]
    n.manifest = {
        "description": "KernelBench level 3, problem 45 (45_UNetSoftmax): a UNet on x (B, CI, H, W) whose DoubleConv "
                       "is Conv2d(c, c', 3, padding 1), BatchNorm2d, Softmax(dim=-1) (over W), Conv2d(c', c', 3, "
                       "padding 1), BatchNorm2d, Softmax(dim=-1); encoders with F, 2F, 4F, 8F channels each followed "
                       "by MaxPool2d(2), the bottleneck (16F; F = 64, KernelBench's features, fixed here), then four times ConvTranspose2d(2c, c, 2, stride 2) "
                       "(with bias), concatenation with the encoder output of that level (upsampled first), and a "
                       "DoubleConv back to c channels; finally Conv2d(F, CO, 1). All convolutions have biases. "
                       "KernelBench's sizes B = 8, CI = 8, CO = 4, H = 64, W = 512 (H and W multiples of "
                       "16). Deviation: the default W is 128, not 512: the softmax over W = 512 leaves values near "
                       "1/512, so the next BatchNorm's variances come near its eps and it amplifies float32 rounding "
                       "(a float32-activations network, the reference's own included, differs from a float64 one "
                       "by 0.5-47x the tolerance, 720x on the H200); at W = 128 a float32 forward is within 0.18x "
                       "(a CPU emulation, tools/problems/emulate_level3.py, 3 seeds). " + COMMON.replace("Linear and Conv weights", "ConvTranspose (fan_in from weight dim 1: c*2*2), Linear and Conv weights") +
                       X_NOTE + "Output y (B, CO, H, W).",
        "torch_model": {"globals": {"batch_size": "B", "in_channels": "CI", "out_channels": "CO", "features": "64",
                                    "height": "H", "width": "W"},
                        "init": ["CI", "CO", "64"], "forward": ["x"]},
        "dims": {"default": {"B": 8, "CI": 8, "CO": 4, "H": 64, "W": 128},
                 "small": {"B": 2, "CI": 3, "CO": 2, "H": 16, "W": 32},
                 "alt": [{"B": 3, "CI": 1, "CO": 5, "H": 48, "W": 16}, {"B": 1, "CI": 5, "CO": 1, "H": 32, "W": 80}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "CI": {"min": 1, "max": 8}, "CO": {"min": 1, "max": 8},
                            "H": {"values": [16, 32, 48, 64, 80, 96, 112, 128]},
                            "W": {"values": [16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192]}},
                   "require": ["B*H*W >= 512"], "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "any batch, input and output channels, image sizes "
                          "multiples of 16 (four 2x2 pools and four 2x upconvolutions meet exactly); at least two "
                          "values per channel at the bottleneck for BatchNorm"},
        "values": values(64, BN_STRUCT_WHY % 64,
                         large_why="every convolution is followed by training-mode BatchNorm, which removes the "
                                   "input's scale, and the softmax then sees O(1) values; the structured runs scale "
                                   "rows and columns"),
        "tolerance": cnn_tolerance("Nineteen convolutions with training-mode BatchNorm and softmax over W"),
        "bytes": "4*(B*CI*H*W + %s + B*CO*H*W)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    return n


SPECS += [p045]


ZERO = {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}}
ONE = {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}


def encoder_views(n, t, L, E, FF):
    """The parameters of L stacked nn.TransformerEncoderLayer(E, NH, FF) (torch prefix t with {i}):
    self_attn in_proj (xavier uniform: bound 1/sqrt(2E/3), fan_in 2*E/3 rounded down) and its bias
    (zeros), out_proj (Linear init, bias zeros), linear1, linear2, norm1, norm2."""
    v = {}
    v["wi"] = n.view("in_w", [L, "3*%s" % E, E], fan_in("2*%s/3" % E), t + "self_attn.in_proj_weight")
    v["bi"] = n.view("in_b", [L, "3*%s" % E], ZERO, t + "self_attn.in_proj_bias")
    v["wo"] = n.view("out_w", [L, E, E], fan_in(E), t + "self_attn.out_proj.weight")
    v["bo"] = n.view("out_b", [L, E], ZERO, t + "self_attn.out_proj.bias")
    v["w1"], v["b1"] = n.linear_views("ff1", FF, E, t + "linear1", stack=L)
    v["w2"], v["b2"] = n.linear_views("ff2", E, FF, t + "linear2", stack=L)
    v["g1"] = n.view("n1_g", [L, E], ONE, t + "norm1.weight")
    v["e1"] = n.view("n1_b", [L, E], ZERO, t + "norm1.bias")
    v["g2"] = n.view("n2_g", [L, E], ONE, t + "norm2.weight")
    v["e2"] = n.view("n2_b", [L, E], ZERO, t + "norm2.bias")
    return v


def encoder_layers(n, v, xs, NB, T, E, NH, FF, L):
    """L post-norm encoder layers (ReLU feed-forward, LayerNorm eps 1e-5) over xs [NB, T, E] in
    place: NB sequences of length T (batch-major), a @for loop over the stacked views."""
    R = "%s*%s" % (NB, T)
    n.buf("h", "%s*%s*%s" % (NB, T, E))
    n.buf("qkv", "%s*%s*3*%s" % (NB, T, E))
    for b in ("q", "k", "v", "ya", "z"):
        n.buf(b, "%s*%s*%s" % (NB, T, E))
    n.buf("m", "%s*%s*%s" % (NB, T, FF))
    n.buf("s", "%s*%s*%s*%s" % (NB, NH, T, T), "f64")
    n.buf("yh", "%s*%s*%s" % (NB, T, E), "f64")
    with n.loop("l", 0, L):
        n.linear(xs, "%s[l*3*%s*%s]" % (v["wi"], E, E), "%s[l*3*%s]" % (v["bi"], E), "qkv", R, "3*%s" % E, E)
        n.causal_attention("qkv", "ya", NB, T, E, NH, kind=2)
        n.linear("ya", "%s[l*%s*%s]" % (v["wo"], E, E), "%s[l*%s]" % (v["bo"], E), "z", R, E, E, res=xs)
        n.layernorm("z", "%s[l*%s]" % (v["g1"], E), "%s[l*%s]" % (v["e1"], E), "h", R, E)
        n.linear("h", "%s[l*%s*%s]" % (v["w1"], FF, E), "%s[l*%s]" % (v["b1"], FF), "m", R, FF, E, "L3_RELU")
        n.linear("m", "%s[l*%s*%s]" % (v["w2"], E, FF), "%s[l*%s]" % (v["b2"], E), "z", R, E, FF, res="h")
        n.layernorm("z", "%s[l*%s]" % (v["g2"], E), "%s[l*%s]" % (v["e2"], E), xs, R, E)


def p028():
    n = Net(28, "vision_transformer", "28_VisionTransformer", "Vision Transformer (KernelBench's, sequence-first encoder)")
    n.input("img", ["B", "CH", "IMG", "IMG"])
    n.output("y", ["B", "NC"])
    pos = n.view("pos", [1, "N1", "E"], NORMAL, "pos_embedding")
    pw, pb = n.linear_views("patch", "E", "PD", "patch_to_embedding")
    cls = n.view("cls", [1, 1, "E"], NORMAL, "cls_token")
    enc = encoder_views(n, "transformer.layers.{i}.", "L", "E", "MLP")
    hw1, hb1 = n.linear_views("head1", "MLP", "E", "mlp_head.0")
    hw2, hb2 = n.linear_views("head2", "NC", "MLP", "mlp_head.3")
    n.buf("pt", "B*NP*PD")
    n.buf("emb", "B*NP*E")
    n.buf("xs", "N1*B*E")
    n.buf("acc", "max(max(N1*B*max(3*E, MLP), B*NP*E), B*NC)", "f64")
    n.kernel_launch("l3_vit_patches<<<%s, 256>>>(img, pt, B, CH, IMG, P)" % "min(cdiv(B*CH*IMG*IMG, 256), 65536)")
    n.linear("pt", pw, pb, "emb", "B*NP", "E", "PD")
    n.kernel_launch("l3_vit_embed<<<min(cdiv(N1*B*E, 256), 65536), 256>>>(emb, cls, pos, xs, B, N1, E)")
    encoder_layers(n, enc, "xs", "N1", "B", "E", "NH", "MLP", "L")
    n.linear("xs", hw1, hb1, "m", "B", "MLP", "E", "L3_GELU")
    n.linear("m", hw2, hb2, "y", "B", "NC", "MLP")
    n.notes += ["Patches as KernelBench's unfold-and-reshape reads them, the patch Linear, cls token and position",
                "embedding; L post-norm encoder layers (attention over the B images of each token position, as",
                "nn.TransformerEncoder with batch_first=False reads (B, N1, E)), LayerNorms in double; the head."]
    n.manifest = {
        "description": "KernelBench level 3, problem 28 (28_VisionTransformer), run exactly as KernelBench's code does: "
                       "img (B, CH, IMG, IMG) -> img.unfold(2, P, P).unfold(3, P, P).reshape(B, -1, P*P*CH) (a "
                       "reshape of the unfolded tensor in its (channel, patch row, patch column, row, column) order, "
                       "so a row mixes patches and channels), patch_to_embedding = Linear(PD, E) (PD = P*P*CH), "
                       "cls_token (1, 1, E) prepended, pos_embedding (1, N1, E) added (N1 = (IMG/P)^2 + 1), Dropout(0), "
                       "then nn.TransformerEncoder of L nn.TransformerEncoderLayer(E, NH, MLP, dropout 0) (post-norm: "
                       "x = norm1(x + self_attn(x)), x = norm2(x + linear2(relu(linear1(x)))), LayerNorm eps 1e-5; "
                       "batch_first=False, so the (B, N1, E) tensor is read as a sequence of length B for each of N1 "
                       "token positions: attention runs over the B images), the first token x[:, 0] (B, E), and the "
                       "head Linear(E, MLP), GELU (exact), Dropout(0), Linear(MLP, NC). Parameters as PyTorch "
                       "initialises them: pos_embedding and cls_token N(0, 1) (torch.randn), in_proj_weight xavier "
                       "uniform (bound 1/sqrt(2E/3), written uniform_fan_in with fan_in 2*E/3 rounded down), "
                       "in_proj_bias and out_proj.bias zeros, LayerNorm ones and zeros (varied by the checks), Linear "
                       "weights and biases uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)); the L layers' parameters are "
                       "stacked (view in_w [L, 3E, E]: layer i at index i). KernelBench's sizes B = 2, CH = 3, IMG = "
                       "224, P = 16, E = 512, L = 6, NH = 8, MLP = 2048, NC = 10. " +
                       COMMON.split("Every module parameter")[0] + "Every module parameter is an input, packed into "
                       "`params`. The image is N(0, 1) (KernelBench draws torch.rand). Output y (B, NC).",
        "torch_model": {"globals": {"image_size": "IMG", "patch_size": "P", "num_classes": "NC", "dim": "E",
                                    "depth": "L", "heads": "NH", "mlp_dim": "MLP", "channels": "CH"},
                        "init": ["IMG", "P", "NC", "E", "L", "NH", "MLP", "CH", "0.0", "0.0"], "forward": ["img"]},
        "dims": {"default": {"B": 2, "CH": 3, "IMG": 224, "P": 16, "E": 512, "L": 6, "NH": 8, "MLP": 2048, "NC": 10},
                 "small": {"B": 2, "CH": 1, "IMG": 8, "P": 4, "E": 6, "L": 1, "NH": 2, "MLP": 5, "NC": 3},
                 "alt": [{"B": 3, "CH": 3, "IMG": 15, "P": 5, "E": 36, "L": 2, "NH": 3, "MLP": 17, "NC": 1},
                         {"B": 1, "CH": 2, "IMG": 32, "P": 8, "E": 7, "L": 1, "NH": 7, "MLP": 65, "NC": 11}]},
        "derived": {"G": "IMG/P", "NP": "(IMG/P)*(IMG/P)", "N1": "(IMG/P)*(IMG/P) + 1", "PD": "P*P*CH"},
        "hidden": {"dims": {"B": {"min": 1, "max": 4}, "CH": {"min": 1, "max": 3}, "P": {"values": [2, 4, 8, 16]},
                            "IMG": {"min": 2, "max": 96}, "E": {"min": 2, "max": 96}, "L": {"min": 1, "max": 3},
                            "NH": {"divisor_of": "E"}, "MLP": {"min": 1, "max": 160}, "NC": {"min": 1, "max": 40}},
                   "require": ["IMG % P == 0", "NH <= 16", "2*E/3 >= 1"],
                   "why": "any batch (the encoder's sequence), channels, image sizes that the patch divides, widths "
                          "with every head count up to 16 that divides them, depths 1 to 3 (stacked views walked by "
                          "a loop), MLP widths and class counts; the 64x64 product tiles are masked at every edge"},
        "values": values(64, ATT_STRUCT_WHY % 64, large_why=ATT_LARGE_WHY),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. Post-norm LayerNorms keep every layer's output O(1); "
                             "products of up to 2048 terms err by ~1e-6 relative in float32, and the head's outputs "
                             "are O(0.1-1), inside 1e-4; TF32 products fail"},
        "bytes": "4*(B*CH*IMG*IMG + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    return n


SPECS += [p028]


def mamba2(num, name, kb_name, title, final_state):
    n = Net(num, name, kb_name, title)
    n.input("x", ["B", "T", "H", "P"])
    if final_state:
        n.output("y", ["B", "H", "P", "N"])
    else:
        n.output("y", ["B", "T", "H", "P"])
    # Deviation: A ~ U(-1, 0), not torch.randn (see the manifest's description and docs/LEVEL3.md).
    a = n.view("A", ["B", "T", "H"], {"dist": "uniform", "lo": -1, "hi": 0}, "A")
    bv = n.view("Bp", ["B", "T", "H", "N"], NORMAL, "B")
    cv = n.view("Cp", ["B", "T", "H", "N"], NORMAL, "C")
    if final_state:
        n.ssd_launch("l3_ssd_state<<<min(B*H, 65535), 256, 8*(2*T + T*N)>>>(x, A, Bp, y, B, T, H, P, N)")
    else:
        n.ssd_launch("l3_ssd_y<<<min(B*H, 65535), 256, 8*(T + 2*T*N + T*T)>>>(x, A, Bp, Cp, y, B, T, H, P, N)")
    n.notes += ["The SSD recurrence h_t = exp(A_t) h_{t-1} + B_t x_t^T, y_t = h_t C_t in closed form, in double:",
                "one block per (batch, head), the cumulative sum of A, B and C staged in shared memory."]
    what = ("the final state new_states[:, -1] (B, H, P, N): sum over s of exp(A_{s+1} + ... + A_{T-1}) B_s x_s^T"
            if final_state else "Y (B, T, H, P): y_t = sum over s <= t of exp(A_{s+1} + ... + A_t) (C_t . B_s) x_s")
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): Mamba-2's structured state-space duality as KernelBench "
                       "writes it (chunks of BL steps, einsums over segment sums; the chunking does not change the "
                       "result) on X (B, T, H, P) with the parameters A (B, T, H), B and C (B, T, H, N), no "
                       "initial state; the output is %s. KernelBench's sizes B = 2048, T = 128, H "
                       "= 8, P = 64, N = 16, BL = 64 (T a multiple of BL). float32; the PyTorch source above is "
                       "KernelBench's own (it imports einops). The parameters are inputs, packed into `params` "
                       "(views A, Bp, Cp: the module's A, B, C); B and C N(0, 1) as torch.randn draws them. "
                       "Deviation: A is U(-1, 0), not KernelBench's torch.randn: with A ~ N(0, 1) the segment "
                       "sums A_{s+1} + ... + A_t random-walk to +-30 over 128 steps, the outputs reach 1e15-1e21 "
                       "and PyTorch's own float32 Model is 100-30000x any useful tolerance off a float64 one (a "
                       "CPU emulation, tools/problems/emulate_level3.py; 1000-4000x on the H200); a negative A "
                       "is a decay, as in Mamba-2 itself (A = -exp(A_log) times a positive step), so every "
                       "weight exp(A_{s+1} + ... + A_t) is at most 1. X is N(0, 1) (KernelBench draws "
                       "torch.rand). Output y." % (num, kb_name, what),
        "torch_model": {"globals": {"batch_size": "B", "seq_length": "T", "n_heads": "H", "d_head": "P",
                                    "d_state": "N", "block_len": "BL"},
                        "init": ["B", "T", "H", "P", "N", "BL"], "forward": ["x"]},
        "dims": {"default": {"B": 2048, "T": 128, "H": 8, "P": 64, "N": 16, "BL": 64},
                 "small": {"B": 2, "T": 4, "H": 2, "P": 3, "N": 2, "BL": 2},
                 "alt": [{"B": 3, "T": 33, "H": 3, "P": 17, "N": 5, "BL": 11}, {"B": 1, "T": 1, "H": 1, "P": 65, "N": 1, "BL": 1}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 64}, "T": {"min": 1, "max": 128}, "H": {"min": 1, "max": 16},
                            "P": {"min": 1, "max": 96}, "N": {"min": 1, "max": 24}, "BL": {"divisor_of": "T"}},
                   "why": "any batch, head count, head width and state size, sequences of 1 to 128 steps (the double "
                          "staging holds 8*(T + 2*T*N + T*T) bytes of shared memory, at most 232448) and every chunk length that divides "
                          "them (the result does not depend on it, KernelBench's code requires it)"},
        "values": {"large": {"scale": 0, "why": "A is a log-decay whose sums are exponentiated: larger A overflows "
                                                 "float32 (exp(88)) for any implementation"},
                   "structure": {"on": False, "why": "A is a log-decay whose cumulative sums are exponentiated: the "
                                                     "structured runs' per-row scales up to 4x (times up to 2x per "
                                                     "column) would push exp(S_t - S_s) past float32's range for any "
                                                     "implementation, so no input is structured"},
                   "special": {"values": ["-0"], "why": "only -0 (acts as 0): NaN or inf in A spreads through the "
                                                        "exponentials to every later step in an order the "
                                                        "formulation decides"}},
        "tolerance": {"atol": 1e-3, "rtol": 1e-3,
                      "why": "looser than KernelBench's 1e-4: an output is a sum of up to T = 128 terms "
                             "(C_t . B_s) x_s exp(A_{s+1} + ... + A_t) of size up to ~10 that cancel to O(1-70); "
                             "KernelBench's chunked float32 forward errs by up to 0.64x of 1e-4 (a CPU emulation "
                             "with A ~ U(-1, 0), 3 seeds at the default, small, alt and three hidden dims sets: "
                             "tools/problems/emulate_level3.py), so 1e-3 keeps a 15x margin; an implementation "
                             "that drops the decay or the cross-chunk states is off by far more"},
        "bytes": "4*(B*T*H*P + %s + %s)" % (n.params_numel(), "B*H*P*N" if final_state else "B*T*H*P"),
        "flops": ("2*B*H*T*P*N" if final_state else "B*H*T*T*(N + P)"),
    }
    return n


def p048():
    return mamba2(48, "mamba2_return_y", "48_Mamba2ReturnY", "Mamba-2 SSD, output Y", False)


def p049():
    return mamba2(49, "mamba2_return_final_state", "49_Mamba2ReturnFinalState", "Mamba-2 SSD, final state", True)


SPECS += [p048, p049]


# ---------------------------------------------------------------- 15, 16: DenseNets

def densenet(num, name, kb_name, title, blocks):
    n = Net(num, name, kb_name, title)
    G = 32
    n.input("x", ["B", 3, "H", "W"])
    n.output("y", ["B", "NC"])
    chans, c = [], 64
    for i, L in enumerate(blocks):
        chans.append((c, c + L * G))
        c = c + L * G
        if i != len(blocks) - 1:
            c //= 2
    big = "B*max(64*S1H*S1W, %d*S2H*S2W)" % max(ct for _, ct in chans)
    for b in ("f", "h", "t", "u"):
        n.buf(b, big)
    n.buf("stats", "2*%d" % max(ct for _, ct in chans), "f64")
    n.buf("acc", "B*NC", "f64")
    w0 = n.conv_views("conv0", 64, 3, 7, "features.0", bias=False)[0]
    g0 = n.bn_views("bn0", 64, "features.1")
    conv_bn(n, "x", w0, g0[0], g0[1], "h", "t", "B", 3, 64, "H", "W", "S1H", "S1W", 7, 2, 3)
    n.maxpool("h", "u", "B*64", "S1H", "S1W", "S2H", "S2W", 3, 2, 1)
    hw = ("S2H", "S2W")
    n.copy_channels("u", "f", "B", 64, "S2H*S2W", chans[0][1], 0)
    for bi, L in enumerate(blocks):
        c0, ct = chans[bi]
        h, w = hw
        S = "%s*%s" % (h, w)
        for i in range(L):
            ci = c0 + i * G
            gi = n.bn_views("b%d_%d_bn" % (bi, i), ci, "dense_blocks.%d.layers.%d.0" % (bi, i))
            wi = n.conv_views("b%d_%d_conv" % (bi, i), G, ci, 3, "dense_blocks.%d.layers.%d.2" % (bi, i), bias=False)[0]
            n.bn("f", "stats", gi[0], gi[1], "h", "B", ci, S, "L3_RELU", ld=ct)
            n.conv("h", wi, "t", "B", ci, G, h, w, h, w, 3, 1, 1)
            n.copy_channels("t", "f", "B", G, S, ct, ci)
        if bi != len(blocks) - 1:
            nxt = chans[bi + 1][1]
            gt = n.bn_views("t%d_bn" % bi, ct, "transition_layers.%d.transition.0" % bi)
            wt = n.conv_views("t%d_conv" % bi, ct // 2, ct, 1, "transition_layers.%d.transition.2" % bi, bias=False)[0]
            n.bn("f", "stats", gt[0], gt[1], "h", "B", ct, S, "L3_RELU")
            n.conv("h", wt, "t", "B", ct, ct // 2, h, w, h, w, 1, 1, 0)
            oh, ow = "S%dH" % (bi + 3), "S%dW" % (bi + 3)
            n.avgpool("t", "u", "B*%d" % (ct // 2), h, w, oh, ow, 2, 2)
            n.copy_channels("u", "f", "B", ct // 2, "%s*%s" % (oh, ow), nxt, 0)
            hw = (oh, ow)
    ct = chans[-1][1]
    gf = n.bn_views("final_bn", ct, "final_bn")
    n.bn("f", "stats", gf[0], gf[1], "h", "B", ct, "%s*%s" % hw, "L3_RELU")
    n.row_mean("h", "u", "B*%d" % ct, "%s*%s" % hw)
    fw, fb = n.linear_views("fc", "NC", ct, "classifier")
    n.linear("u", fw, fb, "y", "B", "NC", ct)
    n.notes += ["conv 7x7/2 BN ReLU, max pool; dense blocks of %s layers, each BatchNorm (training mode, in double) and" % "/".join(map(str, blocks)),
                "ReLU of the first channels of the growing features, 3x3 conv, its 32 channels appended; transitions",
                "(BN ReLU, 1x1 conv, 2x2 average pool); final BN ReLU, global average pool, Linear."]
    derived = {}
    for d in ("H", "W"):
        derived["S1" + d] = "(%s - 1)/2 + 1" % d
        derived["S2" + d] = "(S1%s - 1)/2 + 1" % d
        for i in range(3, 6):
            derived["S%d%s" % (i, d)] = "S%d%s/2" % (i - 1, d)
    n.manifest = {
        "description": "KernelBench level 3, problem %d (%s): KernelBench's DenseNet (no bottleneck layers) on x (B, "
                       "H, W) (3 channels, as the module takes): Conv2d(3, 64, 7, stride 2, padding 3, no bias), BatchNorm2d, ReLU, MaxPool2d(3, "
                       "stride 2, padding 1); dense blocks of %s layers with growth 32 (layer i of a block with C0 "
                       "input channels: BatchNorm2d(C0 + 32i), ReLU, Conv2d(C0 + 32i, 32, 3, padding 1, no bias), "
                       "Dropout(0), its output concatenated to the block's features), a transition after each but "
                       "the last (BatchNorm2d, ReLU, Conv2d(c, c/2, 1, no bias), AvgPool2d(2, stride 2)), final "
                       "BatchNorm2d, ReLU, adaptive average pool, Linear(%d, NC). Channels per block: %s. Each "
                       "stride-2 step maps n to (n - 1)/2 + 1, each average pool to n/2. KernelBench's sizes B = 10, "
                       "H = W = 224, NC = 10 (growth_rate 32, fixed here). " % (
                           num, kb_name, ", ".join(map(str, blocks)), ct,
                           ", ".join("%d -> %d" % cc for cc in chans)) + COMMON + X_NOTE + "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "num_classes": "NC"}, "init": ["32", "NC"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "H": 224, "W": 224, "NC": 10},
                 "small": {"B": 4, "H": 64, "W": 65, "NC": 3},
                 "alt": [{"B": 3, "H": 97, "W": 67, "NC": 1}, {"B": 2, "H": 127, "W": 64, "NC": 97}]},
        "derived": derived,
        "hidden": {"dims": {"B": {"min": 1, "max": 3}, "H": {"min": 32, "max": 128},
                            "W": {"min": 32, "max": 128}, "NC": {"min": 1, "max": 1000}},
                   "require": [bn_require("B*S5H*S5W")],
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 3, images of 32 to 128 (odd sizes through the "
                          "stride-2 steps and the floor of each average pool), any class count; " + BN_WHY},
        "values": values(64, BN_STRUCT_WHY % 64, large_why=BN_LARGE_WHY),
        "tolerance": cnn_tolerance("%d convolutions with training-mode BatchNorm before each and a Linear layer" % (sum(blocks) + len(blocks))),
        "bytes": "4*(B*3*H*W + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    check_bn_values(n, "B*S5H*S5W")
    return n


def p015():
    return densenet(15, "densenet121", "15_DenseNet121", "DenseNet-121 (KernelBench's form)", [6, 12, 24, 16])


def p016():
    return densenet(16, "densenet201", "16_DenseNet201", "DenseNet-201 (KernelBench's form)", [6, 12, 48, 32])


SPECS += [p015, p016]


def p032():
    n = Net(32, "convolutional_vision_transformer", "32_ConvolutionalVisionTransformer", "Convolutional vision transformer")
    n.input("x", ["B", "CI", "IMG", "IMG"])
    n.output("y", ["B", "NC"])
    cw, cb = n.conv_views("patch", "E", "CI", "P", "conv1")
    lw, lb = n.linear_views("proj", "E", "E*NP", "linear_proj")
    enc = encoder_views(n, "transformer_layers.{i}.", "L", "E", "4*E")
    cls = n.view("cls", [1, 1, "E"], ZERO, "cls_token")
    fw, fb = n.linear_views("fc", "NC", "E", "fc_out")
    n.buf("t", "B*E*NP")
    n.buf("pe", "B*E*NP")
    n.buf("pj", "B*E")
    n.buf("xs", "B*2*E")
    n.buf("acc", "B*max(2*4*E, NC)", "f64")
    conv_bias_act(n, "x", cw, cb, "pe", "t", "B", "CI", "E", "IMG", "IMG", "G", "G", "P", "P", 0, act="L3_NONE", cc=1,
                  split=False)  # image channels: a split would not pay for its 17th scratch buffer
    n.linear("pe", lw, lb, "pj", "B", "E", "E*NP")
    # tokens (B, 2, E): the cls token then the projection (as channels 0 and 1 of S = E)
    n.launch("l3_copy_channels<<<min(cdiv(B*E, 256), 65536), 256>>>(pj, xs, B, 1, E, 2, 1)")
    n.kernel_launch("l3_broadcast_rows<<<min(cdiv(B*E, 256), 65536), 256>>>(%s, xs, B, E, 2*E)" % cls)
    encoder_layers(n, enc, "xs", "B", 2, "E", "NH", "4*E", "L")
    n.buf("x0", "B*E")
    n.copy_rows("xs", "x0", "B", "E", "2*E")
    n.linear("x0", fw, fb, "y", "B", "NC", "E")
    n.notes += ["Patch convolution (P x P, stride P, with bias), the Linear projection of the flattened map, a",
                "two-token sequence (cls, projection), L post-norm encoder layers (batch first), Linear on cls."]
    n.manifest = {
        "description": "KernelBench level 3, problem 32 (32_ConvolutionalVisionTransformer): on x (B, CI, IMG, IMG): "
                       "conv1 = Conv2d(CI, E, P, stride P) (with bias) to (B, E, G, G), G = IMG/P, flattened to (B, "
                       "E*G*G), linear_proj = Linear(E*G*G, E), a sequence of two tokens (cls_token, a parameter of "
                       "zeros (1, 1, E) varied by the checks, then the projection), L nn.TransformerEncoderLayer(E, "
                       "NH, 4E, dropout 0, batch_first=True) (post-norm: x = norm1(x + self_attn(x)), x = norm2(x + "
                       "linear2(relu(linear1(x)))), LayerNorm eps 1e-5), then fc_out = Linear(E, NC) on the cls "
                       "token. Attention parameters as nn.MultiheadAttention initialises them (in_proj_weight xavier "
                       "uniform, bound 1/sqrt(2E/3), written uniform_fan_in with fan_in 2*E/3 rounded down; biases "
                       "zeros, varied); the L layers' parameters stacked (view in_w [L, 3E, E]). KernelBench's sizes "
                       "B = 10, CI = 3, IMG = 32, P = 4, E = 128, NH = 4, L = 6, NC = 1000 (CI, IMG, P and L are "
                       "Model's defaults there). " + COMMON.split("Every module parameter")[0] +
                       "Every module parameter is an input, packed into `params`. " + X_NOTE + "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "image_size": "IMG", "embed_dim": "E", "in_channels": "CI",
                                    "num_heads": "NH", "num_classes": "NC"},
                        "init": ["NC", "E", "NH", "L", "4.0", "P", "CI", "IMG"], "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 3, "IMG": 32, "P": 4, "E": 128, "NH": 4, "L": 6, "NC": 1000},
                 "small": {"B": 2, "CI": 3, "IMG": 8, "P": 4, "E": 6, "NH": 2, "L": 1, "NC": 3},
                 "alt": [{"B": 3, "CI": 1, "IMG": 6, "P": 2, "E": 36, "NH": 3, "L": 2, "NC": 1},
                         {"B": 1, "CI": 4, "IMG": 20, "P": 4, "E": 7, "NH": 7, "L": 1, "NC": 97}]},
        "derived": {"G": "IMG/P", "NP": "(IMG/P)*(IMG/P)"},
        "hidden": {"dims": {"B": {"min": 1, "max": 16}, "CI": {"min": 1, "max": 4}, "IMG": {"min": 2, "max": 48},
                            "P": {"values": [2, 4]}, "E": {"min": 2, "max": 96}, "NH": {"divisor_of": "E"},
                            "L": {"min": 1, "max": 4}, "NC": {"min": 1, "max": 1000}},
                   "require": ["IMG % P == 0", "NH <= 16", "2*E/3 >= 1"],
                   "why": "any batch, channels, image sizes the patch divides, widths with every head count up to "
                          "16 that divides them, 1 to 4 layers (stacked views walked by a loop), any class count; "
                          "patches 2 and 4 (conv2d_ref's stride-P tile fits shared memory)"},
        "values": values(64, ATT_STRUCT_WHY % 64, large_why=ATT_LARGE_WHY),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. Post-norm LayerNorms keep every layer's output O(1); "
                             "the projection sums E*G*G = 8192 products, which float32 sums to ~1e-6 relative, "
                             "inside 1e-4; TF32 products fail"},
        "bytes": "4*(B*CI*IMG*IMG + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    return n


SPECS += [p032]


def p029():
    n = Net(29, "swin_mlp", "29_SwinMLP", "Swin-MLP (tiny)")
    n.input("x", ["B", "CI", 224, 224])
    n.output("y", ["B", "NC"])
    depths, heads, ws = [2, 2, 6, 2], [3, 6, 12, 24], 7
    pw, pb = n.conv_views("patch", 96, "CI", 4, "patch_embed.proj")
    pg = n.view("patch_ng", [96], ONE, "patch_embed.norm.weight")
    pbn = n.view("patch_nb", [96], ZERO, "patch_embed.norm.bias")
    big = "B*3136*96*4"
    for b in ("xa", "xb", "h", "m", "t"):
        n.buf(b, big)
    n.buf("acc", big, "f64")
    conv_bias_act(n, "x", pw, pb, "h", "t", "B", "CI", 96, 224, 224, 56, 56, 4, 4, 0, act="L3_NONE", cc=1)
    n.transpose("h", "t", "B", 96, 3136)
    n.layernorm("t", pg, pbn, "xa", "B*3136", 96)
    cur, other, res, C = "xa", "xb", 56, 96
    for s, (depth, nh) in enumerate(zip(depths, heads)):
        L = res * res
        w_eff = min(ws, res)
        for k in range(depth):
            shift = 0 if (k % 2 == 0 or res <= ws) else ws // 2
            t = "layers.%d.blocks.%d." % (s, k)
            pre = "s%d_%d_" % (s, k)
            g1 = n.view(pre + "n1_g", [C], ONE, t + "norm1.weight")
            e1 = n.view(pre + "n1_b", [C], ZERO, t + "norm1.bias")
            sw = n.view(pre + "sp_w", [nh * w_eff * w_eff, w_eff * w_eff, 1], fan_in(w_eff * w_eff), t + "spatial_mlp.weight")
            sb = n.view(pre + "sp_b", [nh * w_eff * w_eff], fan_in(w_eff * w_eff), t + "spatial_mlp.bias")
            g2 = n.view(pre + "n2_g", [C], ONE, t + "norm2.weight")
            e2 = n.view(pre + "n2_b", [C], ZERO, t + "norm2.bias")
            f1w, f1b = n.linear_views(pre + "fc1", 4 * C, C, t + "mlp.fc1")
            f2w, f2b = n.linear_views(pre + "fc2", C, 4 * C, t + "mlp.fc2")
            n.layernorm(cur, g1, e1, "h", "B*%d" % L, C)
            n.kernel_launch("l3_swin_spatial<<<%s, 256>>>(h, %s, %s, %s, %s, B, %d, %d, %d, %d, %d, %d)"
                            % ("min(cdiv(B*%d, 256), 65536)" % (L * C), sw, sb, cur, other, res, res, C, nh, w_eff, shift))
            n.count(w_eff * w_eff, ["B", L * C])
            n.layernorm(other, g2, e2, "h", "B*%d" % L, C)
            n.linear("h", f1w, f1b, "m", "B*%d" % L, 4 * C, C, "L3_GELU")
            n.linear("m", f2w, f2b, cur, "B*%d" % L, C, 4 * C, res=other)
        if s < 3:
            t = "layers.%d.downsample." % s
            pre = "s%d_ds_" % s
            ng = n.view(pre + "n_g", [4 * C], ONE, t + "norm.weight")
            nb = n.view(pre + "n_b", [4 * C], ZERO, t + "norm.bias")
            rw = n.view(pre + "red_w", [2 * C, 4 * C], fan_in(4 * C), t + "reduction.weight")
            n.kernel_launch("l3_patch_merge<<<%s, 256>>>(%s, m, B, %d, %d, %d)" % ("min(cdiv(B*%d, 256), 65536)" % (L * C), cur, res, res, C))
            n.layernorm("m", ng, nb, "h", "B*%d" % (L // 4), 4 * C)
            n.linear("h", rw, None, cur, "B*%d" % (L // 4), 2 * C, 4 * C)
            res, C = res // 2, 2 * C
    fg = n.view("norm_g", [768], ONE, "norm.weight")
    fbn = n.view("norm_b", [768], ZERO, "norm.bias")
    n.layernorm(cur, fg, fbn, "h", "B*49", 768)
    n.transpose("h", "t", "B", 49, 768)
    n.row_mean("t", "m", "B*768", 49)
    hw, hb = n.linear_views("head", "NC", 768, "head")
    n.linear("m", hw, hb, "y", "B", "NC", 768)
    n.notes += ["Patch embedding (4x4/4 conv with bias, LayerNorm), four stages of Swin-MLP blocks (LayerNorm, the",
                "shifted-window spatial MLP with its residual, LayerNorm, GELU MLP with its residual) and patch",
                "merging, LayerNorm, mean over tokens, Linear; everything in double, rounded once per op."]
    n.manifest = {
        "description": "KernelBench level 3, problem 29 (29_SwinMLP): Swin-MLP with its defaults on x (B, CI, 224, "
                       "224): patch embedding Conv2d(CI, 96, 4, stride 4) (with bias), flattened to (B, 3136, 96), "
                       "LayerNorm; four stages of 2, 2, 6, 2 blocks with 96, 192, 384, 768 channels, 3, 6, 12, 24 "
                       "heads at 56, 28, 14, 7 tokens a side, window 7 (shift 3 in every second block while the "
                       "side exceeds 7; none at 7): x = x + spatial_mlp(x') where x' = LayerNorm(x), padded by 7 - "
                       "shift before and shift after (zeros) when shifted, cut into 7x7 windows, each head's channels "
                       "mixed across the window's 49 positions by a grouped Conv1d (groups = heads, weight (heads*49, "
                       "49, 1), with bias), windows put back and the padding cut; then x = x + fc2(GELU(fc1(LayerNorm"
                       "(x)))) (fc1 = Linear(C, 4C)); patch merging after the first three stages (x[0::2, 0::2], "
                       "x[1::2, 0::2], x[0::2, 1::2], x[1::2, 1::2] concatenated, LayerNorm(4C), Linear(4C, 2C) without "
                       "bias); LayerNorm(768), mean over the tokens, head = Linear(768, NC). Drop path is the "
                       "identity. KernelBench's sizes B = 10, CI = 3, NC = 1000 (the image is fixed at 224). " +
                       COMMON.replace("Linear and Conv weights", "Conv1d, Linear and Conv weights") +
                       "LayerNorm weights are ones and biases zeros (varied by the checks). " + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "image_size": "224"}, "init": ["224", "4", "CI", "NC"],
                        "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 3, "NC": 1000},
                 "small": {"B": 1, "CI": 3, "NC": 3},
                 "alt": [{"B": 3, "CI": 1, "NC": 1}, {"B": 2, "CI": 4, "NC": 97}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 3}, "CI": {"min": 1, "max": 4}, "NC": {"min": 1, "max": 1000}},
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 3 (each image ~9 GFLOP), 1 to 4 input channels, any class count; the "
                          "image side is fixed by the model (224: windows of 7 at every stage)"},
        "values": values(64, "the scaled input and weight views (per-row and per-column scales up to 8x) scale "
                         "each Linear's and spatial MLP's sums, which LayerNorm renormalises block by block, and the "
                         "sums cancel; atol x64 (an estimate, to be calibrated on the H100); no spikes: every output "
                         "mixes many input elements",
                         large_why="LayerNorm before every block and at the end makes the network nearly invariant to "
                                   "the input's scale; the structured runs scale rows and columns"),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. LayerNorm keeps every block's input O(1); the "
                             "products sum up to 3072 terms, which float32 sums to ~1e-6 relative, and the output "
                             "is the head's O(0.1-1) logits, inside 1e-4; TF32 products fail"},
        "bytes": "4*(B*CI*224*224 + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    return n


SPECS += [p029]


def p030():
    n = Net(30, "swin_transformer_v2", "30_SwinTransformerV2", "Swin Transformer V2 (tiny)")
    n.input("x", ["B", "CI", 224, 224])
    n.output("y", ["B", "NC"])
    depths, heads, ws = [2, 2, 6, 2], [3, 6, 12, 24], 7
    pw, pb = n.conv_views("patch", 96, "CI", 4, "patch_embed.proj")
    pg = n.view("patch_ng", [96], ONE, "patch_embed.norm.weight")
    pbn = n.view("patch_nb", [96], ZERO, "patch_embed.norm.bias")
    big = "B*3136*96"
    for b in ("xa", "xb", "ao", "t", "h"):
        n.buf(b, big)
    n.buf("qkvb", big + "*3")
    n.buf("m", big + "*4")
    n.buf("acc", big + "*4", "f64")
    n.buf("tab", "13*13*24")
    conv_bias_act(n, "x", pw, pb, "h", "t", "B", "CI", 96, 224, 224, 56, 56, 4, 4, 0, act="L3_NONE", cc=1)
    n.transpose("h", "t", "B", 96, 3136)
    n.layernorm("t", pg, pbn, "xa", "B*3136", 96)
    cur, other, res, C = "xa", "xb", 56, 96
    LOG10 = 2.302585092994046
    for s, (depth, nh) in enumerate(zip(depths, heads)):
        L = res * res
        w_eff = min(ws, res)
        R = "B*%d" % L
        for k in range(depth):
            shift = 0 if (k % 2 == 0 or res <= ws) else ws // 2
            t = "layers.%d.blocks.%d." % (s, k)
            pre = "s%d_%d_" % (s, k)
            ls = n.view(pre + "ls", [nh, 1, 1], {"dist": "constant", "value": LOG10,
                                                 "vary": {"dist": "normal", "mean": LOG10, "std": 0.5}},
                        t + "attn.logit_scale")
            c1w, c1b = n.linear_views(pre + "cpb1", 512, 2, t + "attn.cpb_mlp.0")
            c2w = n.linear_views(pre + "cpb2", nh, 512, t + "attn.cpb_mlp.2", bias=False)[0]
            qw = n.view(pre + "qkv_w", [3 * C, C], fan_in(C), t + "attn.qkv.weight")
            qb = n.view(pre + "q_b", [C], ZERO, t + "attn.q_bias")
            vb = n.view(pre + "v_b", [C], ZERO, t + "attn.v_bias")
            prw, prb = n.linear_views(pre + "proj", C, C, t + "attn.proj")
            g1 = n.view(pre + "n1_g", [C], ONE, t + "norm1.weight")
            e1 = n.view(pre + "n1_b", [C], ZERO, t + "norm1.bias")
            g2 = n.view(pre + "n2_g", [C], ONE, t + "norm2.weight")
            e2 = n.view(pre + "n2_b", [C], ZERO, t + "norm2.bias")
            f1w, f1b = n.linear_views(pre + "fc1", 4 * C, C, t + "mlp.fc1")
            f2w, f2b = n.linear_views(pre + "fc2", C, 4 * C, t + "mlp.fc2")
            n.kernel_launch("l3_swin_cpb<<<%d, 256>>>(%s, %s, %s, tab, %d, %d)"
                            % (-(-(2 * w_eff - 1) ** 2 * nh // 256), c1w, c1b, c2w, w_eff, nh))
            n.product(cur, qw, "acc", R, 3 * C, C)
            n.kernel_launch("l3_qkv_bias<<<min(cdiv(%s*%d, 256), 65536), 256>>>(acc, %s, %s, qkvb, %s, %d)"
                            % (R, 3 * C, qb, vb, R, C))
            n.kernel_launch("l3_swin_v2_attn<<<min(cdiv(%s*%d, 128), 65536), 128>>>(qkvb, tab, %s, ao, B, %d, %d, %d, %d, %d, %d)"
                            % (R, nh, ls, res, res, C, nh, w_eff, shift))
            n.count(2 * w_eff * w_eff, ["B", L * C])
            n.linear("ao", prw, prb, "t", R, C, C)
            n.layernorm("t", g1, e1, "h", R, C)
            n.bias_act("h", None, other, "%s*%d" % (R, C), 1, C, res=cur)
            n.linear(other, f1w, f1b, "m", R, 4 * C, C, "L3_GELU")
            n.linear("m", f2w, f2b, "t", R, C, 4 * C)
            n.layernorm("t", g2, e2, "h", R, C)
            n.bias_act("h", None, cur, "%s*%d" % (R, C), 1, C, res=other)
        if s < 3:
            t = "layers.%d.downsample." % s
            pre = "s%d_ds_" % s
            rw = n.view(pre + "red_w", [2 * C, 4 * C], fan_in(4 * C), t + "reduction.weight")
            ng = n.view(pre + "n_g", [2 * C], ONE, t + "norm.weight")
            nb = n.view(pre + "n_b", [2 * C], ZERO, t + "norm.bias")
            n.kernel_launch("l3_patch_merge<<<%s, 256>>>(%s, m, B, %d, %d, %d)" % ("min(cdiv(B*%d, 256), 65536)" % (L * C), cur, res, res, C))
            n.linear("m", rw, None, "t", "B*%d" % (L // 4), 2 * C, 4 * C)
            n.layernorm("t", ng, nb, cur, "B*%d" % (L // 4), 2 * C)
            res, C = res // 2, 2 * C
    fg = n.view("norm_g", [768], ONE, "norm.weight")
    fbn = n.view("norm_b", [768], ZERO, "norm.bias")
    n.layernorm(cur, fg, fbn, "h", "B*49", 768)
    n.transpose("h", "t", "B", 49, 768)
    n.row_mean("t", "m", "B*768", 49)
    hw, hb = n.linear_views("head", "NC", 768, "head")
    n.linear("m", hw, hb, "y", "B", "NC", 768)
    n.notes += ["Patch embedding (4x4/4 conv with bias, LayerNorm), four stages of Swin V2 blocks (the position-bias",
                "table from cpb_mlp, qkv with q and v biases, cosine window attention with the logit scale, bias,",
                "shift roll and mask, projection; post-norm residuals; GELU MLP) and patch merging (reduction, then",
                "LayerNorm), LayerNorm, mean over tokens, Linear; in double, rounded once per op."]
    n.manifest = {
        "description": "KernelBench level 3, problem 30 (30_SwinTransformerV2): Swin Transformer V2 with its defaults "
                       "on x (B, CI, 224, 224): patch embedding Conv2d(CI, 96, 4, stride 4) (with bias), flattened to "
                       "(B, 3136, 96), LayerNorm; four stages of 2, 2, 6, 2 blocks with 96, 192, 384, 768 channels, "
                       "3, 6, 12, 24 heads at 56, 28, 14, 7 tokens a side, window 7 (shift 3 in every second block "
                       "while the side exceeds 7). A block: x rolled by -shift, 7x7 windows, qkv = Linear(C, 3C, no "
                       "bias) plus cat(q_bias, 0, v_bias); scores = cos(q, k) (F.normalize, eps 1e-12) times "
                       "exp(min(logit_scale, log 100)) plus 16 sigmoid of the continuous position bias (cpb_mlp = "
                       "Linear(2, 512), ReLU, Linear(512, heads, no bias) applied to the log-spaced relative "
                       "coordinates sign(u) log2(|u| + 1)/3, u = 8 d/6), minus 100 between tokens of different "
                       "regions of the rolled image (shifted blocks); softmax; times v; windows and roll undone; "
                       "proj = Linear(C, C); x = x + LayerNorm(that); x = x + LayerNorm(fc2(GELU(fc1(x)))) (fc1 = "
                       "Linear(C, 4C)). Patch merging after the first three stages: x[0::2, 0::2], x[1::2, 0::2], "
                       "x[0::2, 1::2], x[1::2, 1::2] concatenated, Linear(4C, 2C, no bias), then LayerNorm(2C). Then "
                       "LayerNorm(768), mean over the tokens, head = Linear(768, NC). Drop path is the identity. "
                       "logit_scale is log(10) (varied by the checks), q_bias and v_bias zeros (varied). "
                       "KernelBench's sizes B = 10, CI = 3, NC = 1000 (the image is fixed at 224). " +
                       COMMON + "LayerNorm weights are ones and biases zeros (varied by the checks). " + X_NOTE +
                       "Output y (B, NC).",
        "torch_model": {"globals": {"batch_size": "B", "image_size": "224"}, "init": ["224", "4", "CI", "NC"],
                        "forward": ["x"]},
        "dims": {"default": {"B": 10, "CI": 3, "NC": 1000},
                 "small": {"B": 1, "CI": 3, "NC": 3},
                 "alt": [{"B": 3, "CI": 1, "NC": 1}, {"B": 2, "CI": 4, "NC": 97}]},
        "hidden": {"dims": {"B": {"min": 1, "max": 3}, "CI": {"min": 1, "max": 4}, "NC": {"min": 1, "max": 1000}},
                   "max_bytes": 536870912, "max_flops": 3e10,
                   "why": "batches of 1 to 3 (each image ~9 GFLOP), 1 to 4 input channels, any class count; the "
                          "image side is fixed by the model (224: windows of 7 at every stage)"},
        "values": values(64, "the scaled input and weight views (per-row and per-column scales up to 8x) scale each "
                         "Linear's sums, which the post-norm LayerNorms renormalise, and the cosine attention divides "
                         "the scale of q and k out; atol x64 for the sums that cancel (an estimate, to be calibrated "
                         "on the H100); no spikes: every output mixes many input elements",
                         large_why="cosine attention and the LayerNorms make the network nearly invariant to the "
                                   "input's scale; the structured runs scale rows and columns"),
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "why": "KernelBench's float32 tolerance. The post-norm LayerNorms keep every residual branch "
                             "O(1), the attention is cosine (bounded logits, at most 100 times 1 plus 16), the "
                             "products sum up to 3072 terms, which float32 sums to ~1e-6 relative; the output is the "
                             "head's O(0.1-1) logits, inside 1e-4; TF32 products fail"},
        "bytes": "4*(B*CI*224*224 + %s + B*NC)" % n.params_numel(),
        "flops": n.flops_expr(),
    }
    return n


SPECS += [p030]

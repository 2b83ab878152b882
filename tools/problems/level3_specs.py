"""level3_specs: one function per KernelBench level-3 network, each building a level3_net.Net
(manifest parts and the reference's launch schedule); tools/problems/gen_level3.py writes them.
Sizes are KernelBench's (its test code); docs/LEVEL3.md says how a spec is written and lists
the status of all 50."""
from level3_net import Net, NORMAL, fan_in

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

"""level3_net: the builder the level-3 specs (tools/problems/level3_specs.py) describe their
networks with, and from which tools/problems/gen_level3.py writes each problem's manifest and
reference (docs/LEVEL3.md).

A Net collects
- the manifest's parts: dims sets, hidden generator, inputs (activations and state drawn by the
  harness), the packed input "params" whose views are the module's parameters (each with
  KernelBench's own initialiser and the PyTorch state-dict key it holds), outputs, value
  classes, tolerance, roofline expressions, and how the tools run KernelBench's Model
  (torch_model);
- the reference's parts: shared includes, generated glue kernels, scratch buffers and the launch
  schedule (launch lines, @for loops), written by the op helpers below, which launch the shared
  kernels of problems/shared/ (l3_ops.cuh, matmul_tiled_ref.cuh, conv2d_ref.cuh, ...);
- the layer points ("// @layer NAME BUFFER[INDEX] DTYPE[COUNT]", docs/LEVEL3.md "Which layer
  went wrong first"): linear, conv (with its bias_act) and bn name their output by the PyTorch
  module of their parameters (the prefix of the views' torch keys), the activation they fuse
  applied; only outside @for loops and for unstacked parameters (a stacked view's torch key has
  {i} parts the loop's variable does not give).
"""
import contextlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kcproblems  # noqa: E402

F32_GRID = "min(cdiv(%s, 256), 65536)"

# conv2d_ref_split (problems/shared/conv2d_ref.cuh): a convolution whose tiles would leave the
# H100's 132 SMs idle runs each tile in KS splits over its input-channel chunks,
# KS = max(1, min(SPLIT_MAX, cdiv(SPLIT_BLOCKS, tiles), chunks / SPLIT_MIN_CHUNKS)): about two
# blocks per SM, at least SPLIT_MIN_CHUNKS chunks per split. The splits' double partial sums go
# to the scratch conv_part: KS > 1 only when tiles < SPLIT_BLOCKS, so KS * tiles < 2 *
# SPLIT_BLOCKS, and a tile holds at most 16 x 8 x 64 outputs: CONV_PART doubles always suffice.
SPLIT_BLOCKS, SPLIT_MAX, SPLIT_MIN_CHUNKS = 264, 16, 4
CONV_PART = (2 * SPLIT_BLOCKS - 2) * 16 * 8 * 64
# Off in the committed references until a GPU has verified the split kernels against conv2d_ref
# and timed them (docs/LEVEL3.md): gen_level3.py --conv-split writes the split references.
CONV_SPLIT = False

# PyTorch's default initialisers, as the manifest writes them
def fan_in(expr):
    """nn.Linear / nn.Conv weight and bias: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    return {"dist": "uniform_fan_in", "fan_in": expr if isinstance(expr, str) else int(expr)}


NORMAL = {"dist": "normal", "mean": 0, "std": 1}
# nn.BatchNorm / nn.LayerNorm affine parameters: ones and zeros, varied in the checks that vary
# constants (a kernel that ignores them fails there)
ONES = {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}
ZEROS = {"dist": "constant", "value": 0, "vary": {"dist": "normal", "mean": 0, "std": 0.5}}


def grid(n):
    return F32_GRID % n


# l3_ops.cuh's activation codes (launch lines take the number)
ACT = {"L3_NONE": 0, "L3_RELU": 1, "L3_TANH": 2, "L3_SIGMOID": 3, "L3_GELU": 4, "L3_RELU6": 5, "L3_SILU": 6,
       "L3_GELU_TANH": 7}


def act_code(act):
    return ACT[act] if act in ACT else act


class Net:
    def __init__(self, num, name, kb_name, title):
        self.num, self.name, self.kb_name, self.title = num, name, kb_name, title
        self.pid = "level3/%03d_%s" % (num, name)
        self.views = []      # the packed input's views, in order
        self.inputs = []     # activations and state (before the packed params)
        self.outputs = []
        self.params = []
        self.scratch = []    # (name, dtype, count)
        self.lines = []      # "@launch ...", "@for ...", "@end"
        self.includes = []   # lines before the glue kernels (#define, #include)
        self.kernels = []    # (comment, source) of generated glue kernels
        self.notes = []      # lines of the reference's header comment
        self.manifest = {}   # the rest of the manifest (dims, hidden, values, ...)
        self.flops = {}      # multiply-adds of convolutions and products: {extent product: coefficient}
        self._depth = 0
        self._pending = None  # (module, bias view): a conv whose layer point its bias_act ends

    # ---- manifest parts
    def input(self, name, shape, init=NORMAL, dtype="f32"):
        self.inputs.append({"name": name, "dtype": dtype, "shape": list(shape), "init": init})
        return name

    def output(self, name, shape, dtype="f32"):
        self.outputs.append({"name": name, "dtype": dtype, "shape": list(shape)})
        return name

    def view(self, name, shape, init, torch=None):
        v = {"name": name, "shape": list(shape), "init": init}
        if torch:
            v["torch"] = torch
        self.views.append(v)
        return name

    def linear_views(self, prefix, n_out, n_in, torch, bias=True, stack=None):
        """nn.Linear(n_in, n_out)'s weight [n_out, n_in] and bias [n_out] (stack: a leading count
        of identical layers, torch then holds {i})."""
        lead = [stack] if stack is not None else []
        w = self.view(prefix + "_w", lead + [n_out, n_in], fan_in(n_in), torch + ".weight")
        b = self.view(prefix + "_b", lead + [n_out], fan_in(n_in), torch + ".bias") if bias else None
        return w, b

    def conv_views(self, prefix, co, ci, k, torch, bias=True, groups=1, stack=None):
        """nn.Conv2d(ci, co, k, groups)'s weight [co, ci/groups, k, k] and bias [co]."""
        lead = [stack] if stack is not None else []
        cig = ci if groups == 1 else "(%s)/(%s)" % (ci, groups) if isinstance(ci, str) or isinstance(groups, str) else ci // groups
        fi = "%s*%s*%s" % (cig, k, k) if isinstance(cig, str) or isinstance(k, str) else cig * k * k
        w = self.view(prefix + "_w", lead + [co, cig, k, k], fan_in(fi), torch + ".weight")
        b = self.view(prefix + "_b", lead + [co], fan_in(fi), torch + ".bias") if bias else None
        return w, b

    def bn_views(self, prefix, c, torch, stack=None):
        """nn.BatchNorm2d(c)'s weight (ones) and bias (zeros), varied in the checks."""
        lead = [stack] if stack is not None else []
        g = self.view(prefix + "_g", lead + [c], ONES, torch + ".weight")
        b = self.view(prefix + "_b", lead + [c], ZEROS, torch + ".bias")
        return g, b

    # ---- reference parts
    def include(self, line):
        if line not in self.includes:
            self.includes.append(line)

    def kernel(self, comment, source):
        if all(source != s for _, s in self.kernels):
            self.kernels.append((comment, source))

    def buf(self, name, count, dtype="f32"):
        for n, _, _ in self.scratch:
            if n == name:
                raise ValueError("%s: scratch %s twice" % (self.pid, name))
        self.scratch.append((name, dtype, count))
        return name

    def launch(self, text):
        self.lines.append("@launch " + text + ";")

    # ---- layer points
    def module_of(self, view):
        """The PyTorch module a parameter view belongs to (its torch key less the parameter's
        name), or None: not a view, no key, or a stacked key ({expr} parts over the stack index
        i; parts over dims, network.{2*L}, stay for the parser to evaluate)."""
        for v in self.views:
            if v["name"] == view and v.get("torch"):
                parts = re.findall(r"\{([^}]*)\}", v["torch"])
                if any(re.search(r"\bi\b", p) for p in parts):
                    return None
                return v["torch"].rsplit(".", 1)[0]
        return None

    def buffer_dtype(self, name):
        for n, dtype, _ in self.scratch:
            if n == name:
                return dtype
        for t in self.outputs:
            if t["name"] == name:
                return t["dtype"]
        return None

    def layer(self, module, dst, count):
        """"// @layer MODULE BUF[INDEX] DTYPE[COUNT]" after the launches that wrote module's output
        to dst ("buf" or "buf[INDEX]", a scratch buffer or an output); nothing inside a loop."""
        if not module or self._depth:
            return
        buf, _, index = dst.partition("[")
        index = index[:-1] if index else "0"
        dtype = self.buffer_dtype(buf.strip())
        if dtype:
            self.lines.append("@layer %s %s[%s] %s[%s]" % (module, buf.strip(), index, dtype, count))

    @contextlib.contextmanager
    def loop(self, var, first, end):
        self.lines.append("@for %s in %s..%s" % (var, first, end))
        self._depth += 1
        yield var
        self._depth -= 1
        self.lines.append("@end")

    # ---- ops (launch lines over the shared kernels)
    def ops(self):
        self.include('#include "shared/l3_ops.cuh"')

    def product(self, x, w, acc, M, N, K):
        """acc[M, N] = x[M, K] w[N, K]^T in double (FP64 tensor cores): a Linear without bias."""
        self.count(1, [M, N, K])
        self.ops()
        self.include('#include "shared/matmul_tiled_ref.cuh"')
        self.kernel("// y = x w^T in double (exact products on the FP64 tensor cores, double sums):\n"
                    "// nn.Linear's product, its bias added by l3_bias_act_d",
                    "extern \"C\" __global__ void __launch_bounds__(256, 2)\n"
                    "l3_linear_nt(const float *__restrict__ x, const float *__restrict__ w, double *__restrict__ y,\n"
                    "             long long M, long long N, long long K)\n"
                    "{\n"
                    "    mm_tile<true>(x, w, y, M, N, K, 1.0);\n"
                    "}")
        self.launch("l3_linear_nt<<<dim3(cdiv(%s, 64), cdiv(%s, 64)), dim3(16, 16)>>>(%s, %s, %s, %s, %s, %s)"
                    % (M, N, x, w, acc, M, N, K))

    def product_nn(self, x, w, acc, M, N, K):
        """acc[M, N] = x[M, K] w[K, N] in double (FP64 tensor cores): a matmul by a parameter stored K x N."""
        self.ops()
        self.count(1, [M, N, K])
        self.include('#include "shared/matmul_tiled_ref.cuh"')
        self.kernel("// y = x w in double (exact products on the FP64 tensor cores, double sums)",
                    "extern \"C\" __global__ void __launch_bounds__(256, 2)\n"
                    "l3_matmul_nn(const float *__restrict__ x, const float *__restrict__ w, double *__restrict__ y,\n"
                    "             long long M, long long N, long long K)\n"
                    "{\n"
                    "    mm_tile<false>(x, w, y, M, N, K, 1.0);\n"
                    "}")
        self.launch("l3_matmul_nn<<<dim3(cdiv(%s, 64), cdiv(%s, 64)), dim3(16, 16)>>>(%s, %s, %s, %s, %s, %s)"
                    % (M, N, x, w, acc, M, N, K))

    def linear(self, x, w, b, y, M, N, K, act="L3_NONE", acc="acc", res="0"):
        """y[M, N] = act(x[M, K] w[N, K]^T + b (+ res)): the product on the FP64 tensor cores into
        the double scratch acc (at least M*N), then bias, residual and activation in double."""
        self.product(x, w, acc, M, N, K)
        self.launch("l3_bias_act_d<<<%s, 256>>>(%s, %s, %s, %s, (%s)*(%s), 1, %s, %s)"
                    % (grid("(%s)*(%s)" % (M, N)), acc, b or "0", res, y, M, N, N, act_code(act)))
        self.layer(self.module_of(w), y, "(%s)*(%s)" % (M, N))

    def count(self, coef, extents):
        """Adds coef * prod(extents) multiply-adds; integer factors go into coef."""
        key = []
        for e in extents:
            try:
                coef *= kcproblems.eval_dim_expr(e, {})
            except Exception:  # noqa: BLE001 (over dims)
                key.append("(%s)" % e)
        k = "*".join(key)
        self.flops[k] = self.flops.get(k, 0) + coef

    def flops_expr(self):
        """2 * the multiply-adds counted, grouped by their extents over dims."""
        return "2*(%s)" % " + ".join(("%s*%d" % (k, c) if k else "%d" % c) for k, c in self.flops.items())

    def conv(self, x, w, y, B, CI, CO, H, W, OH, OW, K, S, P, G=1, cc=4, split=True):
        """y = conv2d(x, w) without bias (conv2d_ref.cuh: exact products, double sums, float), split
        over the input channels where the tiles are few (SPLIT_BLOCKS above) when CONV_SPLIT is on,
        unless split is False or the input channels make too few chunks for any split."""
        if isinstance(CI, int) and isinstance(G, int):
            self.count(CI // G, [B, CO, OH, OW, K, K])
        else:
            self.count(1, [B, CO, OH, OW, K, K, "(%s)/(%s)" % (CI, G)])
        smem = "12*(%d*(%s)*(%s)*16 + %d*(7*(%s) + (%s))*(63*(%s) + (%s)))" % (cc, K, K, cc, S, K, S, K)
        tiles = "(%s)*(%s)*cdiv((%s)/(%s), 16)*cdiv(%s, 64)*cdiv(%s, 8)" % (B, G, CO, G, OW, OH)
        self.include("#define CC %d /* input channels per chunk of conv2d_ref */" % cc)
        if not (split and CONV_SPLIT) or isinstance(CI, int) and isinstance(G, int) and -(-(CI // G) // cc) < 2 * SPLIT_MIN_CHUNKS:
            self.include('#include "shared/conv2d_ref.cuh"')  # too few chunks to split, any dims
            self.launch("conv2d_ref<<<min(%s, 1048576), 128, %s>>>(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 1, 1, %s)"
                        % (tiles, smem, x, w, y, B, CI, CO, H, W, OH, OW, K, K, S, S, P, P, G))
            self.conv_layer(w, y, "(%s)*(%s)*(%s)*(%s)" % (B, CO, OH, OW))
            return
        split, inc = "#define CONV2D_SPLIT /* conv2d_ref_split and conv2d_split_sum too */", '#include "shared/conv2d_ref.cuh"'
        if split not in self.includes:  # before the include, which an unsplit conv may have added
            self.includes.insert(self.includes.index(inc) if inc in self.includes else len(self.includes), split)
        self.include(inc)
        if not any(n == "conv_part" for n, _, _ in self.scratch):
            self.buf("conv_part", str(CONV_PART), "f64")
        ks = "max(1, min(%d, min(cdiv(%d, %s), cdiv((%s)/(%s), %d)/%d)))" % (
            SPLIT_MAX, SPLIT_BLOCKS, tiles, CI, G, cc, SPLIT_MIN_CHUNKS)
        self.launch("conv2d_ref_split<<<min((%s)*(%s), 1048576), 128, %s>>>(%s, %s, %s, conv_part, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 1, 1, %s, %s)"
                    % (tiles, ks, smem, x, w, y, B, CI, CO, H, W, OH, OW, K, K, S, S, P, P, G, ks))
        n = "(%s)*(%s)*(%s)*(%s)" % (B, CO, OH, OW)
        self.launch("conv2d_split_sum<<<%s, 256>>>(conv_part, %s, %s, %s)" % (grid(n), y, n, ks))
        self.conv_layer(w, y, n)

    def conv_layer(self, w, y, n):
        """The conv's layer point: here without a bias, else after the bias_act that adds it."""
        module = self.module_of(w)
        bias = [v["name"] for v in self.views if module and v.get("torch") == module + ".bias"]
        self._pending = (module, bias[0]) if bias else None
        if not bias:
            self.layer(module, y, n)

    def bias_act(self, src, bias, dst, n, inner, nb, act="L3_NONE", res="0"):
        self.ops()
        self.launch("l3_bias_act_f<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, %s, %s)"
                    % (grid(n), src, bias or "0", res, dst, n, inner, nb, act_code(act)))
        if self._pending and self._pending[1] == bias:  # a conv's bias: the conv's output ends here
            self.layer(self._pending[0], dst, n)
        self._pending = None

    def bn(self, x, stats, g, b, y, N, C, S, act="L3_NONE", res="0", eps="1e-5", ld=None):
        """BatchNorm2d in training mode (batch statistics, biased variance) and an activation,
        with an optional residual added before it; stats: a double scratch of 2*C. ld: channels
        per batch entry of x when it holds more than the C normalised (default C)."""
        self.ops()
        ld = ld if ld is not None else C
        self.launch("l3_bn_stats<<<min(%s, 65535), 256>>>(%s, %s, %s, %s, %s, %s)" % (C, x, stats, N, C, S, ld))
        self.launch("l3_bn_apply<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, (%s)*(%s)*(%s), %s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)*(%s)" % (N, C, S)), x, stats, g, b, res, y, N, C, S, C, S, ld, eps, act_code(act)))
        self.layer(self.module_of(g), y, "(%s)*(%s)*(%s)" % (N, C, S))

    def maxpool(self, x, y, NC, H, W, OH, OW, K, S, P=0):
        self.ops()
        self.launch("l3_maxpool2d<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)*(%s)" % (NC, OH, OW)), x, y, NC, H, W, OH, OW, K, S, P))

    def avgpool(self, x, y, NC, H, W, OH, OW, K, S, P=0):
        self.ops()
        self.launch("l3_avgpool2d<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)*(%s)" % (NC, OH, OW)), x, y, NC, H, W, OH, OW, K, S, P))

    def row_mean(self, x, y, rows, L, act="L3_NONE"):
        self.ops()
        self.launch("l3_row_mean<<<min(cdiv(%s, 8), 65536), 256>>>(%s, %s, %s, %s, %s)" % (rows, x, y, rows, L, act_code(act)))

    def copy_channels(self, src, dst, N, Cs, S, Cd, c0):
        self.ops()
        self.launch("l3_copy_channels<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)*(%s)" % (N, Cs, S)), src, dst, N, Cs, S, Cd, c0))

    def copy_rows(self, src, dst, rows, cols, ld):
        self.ops()
        self.launch("l3_copy_rows<<<%s, 256>>>(%s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)" % (rows, cols)), src, dst, rows, cols, ld))

    def rnn(self):
        self.ops()
        self.include('#include "shared/l3_rnn.cuh"')

    def state_in(self, src, dst, n):
        self.rnn()
        self.launch("l3_state_in<<<%s, 256>>>(%s, %s, %s)" % (grid(n), src, dst, n))

    def state_out(self, src, dst, n):
        self.rnn()
        self.launch("l3_state_out<<<%s, 256>>>(%s, %s, %s)" % (grid(n), src, dst, n))

    def attn(self):
        self.ops()
        self.include('#include "shared/matmul_tiled_ref.cuh"')
        self.include('#include "shared/l3_attn.cuh"')

    def layernorm(self, x, g, b, y, rows, C, eps="1e-5"):
        self.attn()
        self.launch("l3_layernorm<<<min(%s, 65535), 256>>>(%s, %s, %s, %s, %s, %s, %s)" % (rows, x, g, b, y, rows, C, eps))

    def causal_attention(self, qkv, y, B, T, C, NH, kind=0):
        """y [B, T, C] = the heads of causal attention over qkv [B, T, 3C] (c_attn's output) side by
        side; kind 0: softmax, 1: ReLU of the scores. Scratch q, k, v (B*T*C floats), s (B*NH*T*T
        doubles), yh (B*T*C doubles) must exist."""
        self.attn()
        self.launch("l3_split_heads<<<%s, 256>>>(%s, q, k, v, %s, %s, %s, %s)" % (grid("%s*%s*%s" % (B, T, C)), qkv, B, T, C, NH))
        self.launch("l3_bmm_nt<<<dim3(cdiv(%s, 64), cdiv(%s, 64), %s*%s), dim3(16, 16)>>>(q, k, s, %s, %s, (%s)/(%s), (%s)/(%s))"
                    % (T, T, B, NH, T, T, C, NH, C, NH))
        self.launch("l3_causal_rows<<<min(cdiv(%s*%s*%s, 8), 65536), 256>>>(s, %s*%s*%s, %s, %d)" % (B, NH, T, B, NH, T, T, kind))
        self.launch("l3_bmm_nn_d<<<dim3(cdiv(%s, 64), cdiv((%s)/(%s), 64), %s*%s), dim3(16, 16)>>>(s, v, yh, %s, (%s)/(%s), %s)"
                    % (T, C, NH, B, NH, T, C, NH, T))
        self.launch("l3_merge_heads<<<%s, 256>>>(yh, %s, %s, %s, %s, %s)" % (grid("%s*%s*%s" % (B, T, C)), y, B, T, C, NH))

    def full_attention(self, qkv, y, B, T, C, NH):
        """As causal_attention with no mask (softmax over every key), one (batch, head) at a time
        in a @for loop: the double score scratch s holds T*T."""
        self.attn()
        hs = "(%s)/(%s)" % (C, NH)
        self.launch("l3_split_heads<<<%s, 256>>>(%s, q, k, v, %s, %s, %s, %s)" % (grid("%s*%s*%s" % (B, T, C)), qkv, B, T, C, NH))
        with self.loop("zh", 0, "%s*%s" % (B, NH)):
            self.launch("l3_bmm_nt<<<dim3(cdiv(%s, 64), cdiv(%s, 64), 1), dim3(16, 16)>>>(q[zh*%s*%s], k[zh*%s*%s], s, %s, %s, %s, %s)"
                        % (T, T, T, hs, T, hs, T, T, hs, hs))
            self.launch("l3_causal_rows<<<min(cdiv(%s, 8), 65536), 256>>>(s, %s, %s, 2)" % (T, T, T))
            self.launch("l3_bmm_nn_d<<<dim3(cdiv(%s, 64), cdiv(%s, 64), 1), dim3(16, 16)>>>(s, v[zh*%s*%s], yh[zh*%s*%s], %s, %s, %s)"
                        % (T, hs, T, hs, T, hs, T, hs, T))
        self.launch("l3_merge_heads<<<%s, 256>>>(yh, %s, %s, %s, %s, %s)" % (grid("%s*%s*%s" % (B, T, C)), y, B, T, C, NH))

    def ssd_launch(self, text):
        self.include('#include "shared/l3_ssd.cuh"')
        self.launch(text)

    def kernel_launch(self, text):
        """A launch of a kernel of the shared attention header (l3_vit_*)."""
        self.attn()
        self.launch(text)

    def transpose(self, src, dst, N, R, C):
        self.attn()
        self.launch("l3_transpose<<<%s, 256>>>(%s, %s, %s, %s, %s)" % (grid("(%s)*(%s)*(%s)" % (N, R, C)), src, dst, N, R, C))

    def slice_channels(self, src, dst, N, Cs, S, Cd, c0):
        self.ops()
        self.launch("l3_slice_channels<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)*(%s)" % (N, Cd, S)), src, dst, N, Cs, S, Cd, c0))

    def channel_shuffle(self, src, dst, N, C, S, G):
        self.ops()
        self.launch("l3_channel_shuffle<<<%s, 256>>>(%s, %s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)*(%s)" % (N, C, S)), src, dst, N, C, S, G))

    def softmax_rows(self, src, dst, rows, L, keep=None):
        self.ops()
        self.launch("l3_softmax_rows<<<min(cdiv(%s, 8), 65536), 256>>>(%s, %s, %s, %s, %s)" % (rows, src, dst, rows, L, keep or L))

    def upconv2x2(self, x, w, b, y, B, CI, CO, H, W):
        self.ops()
        self.count(1, [B, CO, H, W, CI, 4])
        self.launch("l3_upconv2x2<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    % (grid("(%s)*(%s)*4*(%s)*(%s)" % (B, CO, H, W)), x, w, b, y, B, CI, CO, H, W))

    def copy(self, src, dst, n):
        self.ops()
        self.launch("l3_copy<<<%s, 256>>>(%s, %s, %s)" % (grid(n), src, dst, n))

    def params_numel(self):
        """The packed input's element count as the loader lays it out (common/problem.c
        layout_views): constant sizes folded, sizes K*(extents over dims) with K a multiple of 64
        grouped by their extents, other sizes over dims as cdiv(NUMEL, 64)*64."""
        konst, groups, cdivs = 0, {}, []
        for v in self.views:
            k, rest = 1, []
            for e in v["shape"]:
                try:
                    k *= kcproblems.eval_dim_expr(e, {})
                except Exception:  # noqa: BLE001 (a name: an extent over dims)
                    rest.append("(%s)" % e)
            if not rest:
                konst += -(-k // 64) * 64
            elif k % 64 == 0:
                key = "*".join(rest)
                groups[key] = groups.get(key, 0) + k
            else:
                cdivs.append("cdiv(%s%s, 64)*64" % ("%d*" % k if k != 1 else "", "*".join(rest)))
        terms = ["%s*%d" % (g, c) for g, c in groups.items()] + cdivs
        if konst or not terms:
            terms.append(str(konst))
        return " + ".join(terms)

    # ---- output
    def reference_text(self):
        head = ["// Reference for %s (generated by tools/problems/gen_level3.py from" % self.pid,
                "// tools/problems/level3_specs.py: edit the spec, not this file). %s" % self.title]
        head += ["// " + n for n in self.notes]
        body = list(self.includes) + [""]
        for comment, src in self.kernels:
            if comment:
                body.append(comment)
            body += [src, ""]
        tail = ["// @scratch %s %s[%s]" % s for s in self.scratch]
        depth = 0
        for l in self.lines:
            if l == "@end":
                depth -= 1
            tail.append("// " + "  " * depth + l)
            if l.startswith("@for"):
                depth += 1
        return "\n".join(head + body + tail) + "\n"

    def manifest_dict(self, torch_reference):
        m = {"format": "kc-problem v1", "id": self.pid, "title": self.title, "level": 3,
             "kernelbench": {"level": 3, "problem_id": self.num, "name": self.kb_name}}
        mf = self.manifest
        m["description"] = mf["description"]
        m["torch_reference"] = torch_reference
        m["torch_model"] = mf["torch_model"]
        m["dims"] = mf["dims"]
        if mf.get("derived"):
            m["derived"] = mf["derived"]
        m["hidden"] = mf["hidden"]
        inputs = list(self.inputs)
        if self.views:
            inputs.append({"name": "params", "dtype": "f32", "views": self.views})
        m["inputs"] = inputs
        m["outputs"] = self.outputs
        if self.params:
            m["params"] = self.params
        m["values"] = mf["values"]
        m["tolerance"] = mf["tolerance"]
        m["bytes"] = mf["bytes"]
        m["flops"] = mf["flops"]
        m["reference"] = "%03d_%s.cu" % (self.num, self.name)
        return m

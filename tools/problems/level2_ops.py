"""level2_ops: the ops of a KernelBench level-2 chain (elementwise statements, reductions,
softmax, norms, pools, a saved value, a second Linear, a reshape), the vocabulary that the specs
of tools/problems/level2_specs.py are written in, that tools/problems/gen_level2.py turns into
kernels and that tools/problems/value_classes.py reads to derive value classes."""


class Ew:
    """Elementwise statements on v (double). {name} is an input or saved buffer broadcast
    against the current shape (numpy rules, right-aligned); params appear by name.
    out_shape: the result has this (larger) shape and v is read broadcast from the current."""

    def __init__(self, stmt, phrase, out_shape=None):
        self.stmt, self.phrase, self.out_shape = stmt, phrase, out_shape


class Reduce:
    """Reduce dims [a, b) (contiguous) by sum/mean/max/min/lse; keepdim keeps them as 1s."""
    KINDS = {"sum": 0, "mean": 1, "max": 2, "min": 3, "lse": 4}

    def __init__(self, a, b, kind, keepdim, phrase):
        self.a, self.b, self.kind, self.keepdim, self.phrase = a, b, kind, keepdim, phrase


class Softmax:
    def __init__(self, a, b, phrase):  # softmax over the merged dims [a, b)
        self.a, self.b, self.phrase = a, b, phrase


class Norm:
    """kind: batch (stats per dim-1 channel over all else), group (ng groups of dim 1 with all
    later dims), instance (per (n, c) over later dims), layer (over the last dim).
    weight/bias: input names (per channel, or per last-dim element for layer) or None."""

    def __init__(self, kind, eps, weight, bias, phrase, groups=None):
        self.kind, self.eps, self.weight, self.bias = kind, eps, weight, bias
        self.phrase, self.groups = phrase, groups


class Pool:
    def __init__(self, kind, k, s, phrase):  # kind max/avg; k, s: per spatial dim (dim exprs)
        self.kind, self.k, self.s, self.phrase = kind, k, s, phrase


class Save:
    def __init__(self, name):
        self.name = name
        self.phrase = None


class Linear2:
    """A second Linear (x @ w^T + b) on the current (M, K) value."""

    def __init__(self, w, b, n_dim, phrase):
        self.w, self.b, self.n_dim, self.phrase = w, b, n_dim, phrase


class Reshape:
    """Drop or add size-1 dims: the new shape (same element order)."""

    def __init__(self, shape):
        self.shape, self.phrase = shape, None

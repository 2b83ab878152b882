"""fake_torch: the few pieces of PyTorch that an exported KernelBench module
(kexport --format kernelbench) touches when it is imported and when get_inputs()
draws its inputs, in the standard library: flat float lists with a shape. It lets
the CPU tests run a module's input drawing (a packed input's NaN padding and
views) and its Python-side bookkeeping without torch; building and running the
kernel and the Model needs the real one (tests/gpu/test_datasets.sh).

install() puts torch, torch.nn (and .functional) and torch.utils.cpp_extension into
sys.modules."""
import math
import random
import sys
import types

_rng = random.Random(0)


class Tensor:
    def __init__(self, shape, data, dtype="float32"):
        self.shape = tuple(int(e) for e in shape)
        self.data = list(data)
        self.dtype = dtype
        if len(self.data) != math.prod(self.shape):
            raise ValueError("%d elements for shape %s" % (len(self.data), self.shape))

    def numel(self):
        return len(self.data)

    def _map(self, f):
        return Tensor(self.shape, [f(v) for v in self.data], self.dtype)

    def __mul__(self, k):
        return self._map(lambda v: v * k)

    __rmul__ = __mul__

    def __add__(self, k):
        return self._map(lambda v: v + k)

    __radd__ = __add__

    def __sub__(self, k):
        return self._map(lambda v: v - k)

    def to(self, dtype):
        return Tensor(self.shape, self.data, dtype)

    def flatten(self):
        return Tensor((len(self.data),), self.data, self.dtype)

    def reshape(self, *shape):
        return self.flatten() if shape in ((-1,), ((-1,),)) else Tensor(shape, self.data, self.dtype)

    def contiguous(self):
        return self

    def __getitem__(self, s):
        if len(self.shape) != 1 or not isinstance(s, slice):
            raise TypeError("fake_torch: only 1-D slices")
        part = self.data[s]
        return Tensor((len(part),), part, self.dtype)

    def __setitem__(self, s, value):
        if len(self.shape) != 1 or not isinstance(s, slice):
            raise TypeError("fake_torch: only 1-D slices")
        start, stop, _ = s.indices(len(self.data))
        if stop - start != value.numel():
            raise ValueError("fake_torch: %d elements into a slice of %d" % (value.numel(), stop - start))
        self.data[start:stop] = value.data


def _shape(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else tuple(shape)


def full(shape, value, dtype="float32", device=None):
    shape = _shape([shape])
    return Tensor(shape, [float(value)] * math.prod(shape), dtype)


def randn(*shape, **kw):
    shape = _shape(shape)
    return Tensor(shape, [_rng.gauss(0, 1) for _ in range(math.prod(shape))])


def rand(*shape, **kw):
    shape = _shape(shape)
    return Tensor(shape, [_rng.random() for _ in range(math.prod(shape))])


def randint(lo, hi, shape, **kw):
    shape = _shape([shape])
    return Tensor(shape, [float(_rng.randrange(lo, hi)) for _ in range(math.prod(shape))])


def manual_seed(seed):
    _rng.seed(seed)


class Module:
    def __init__(self, *args, **kwargs):
        pass


def install():
    torch = types.ModuleType("torch")
    for name in ("full", "randn", "rand", "randint", "manual_seed", "Tensor"):
        setattr(torch, name, globals()[name])
    for dtype in ("float32", "float16", "bfloat16", "float64", "int32", "int64", "uint8", "bool"):
        setattr(torch, dtype, dtype)
    nn = types.ModuleType("torch.nn")
    nn.Module = Module
    nn.functional = types.ModuleType("torch.nn.functional")  # level-1/2 references import it
    torch.nn = nn
    utils = types.ModuleType("torch.utils")
    ext = types.ModuleType("torch.utils.cpp_extension")

    def load_inline(**kwargs):
        raise RuntimeError("fake_torch: load_inline needs the real torch and nvcc")

    ext.load_inline = load_inline
    utils.cpp_extension = ext
    torch.utils = utils
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": nn.functional,
                        "torch.utils": utils, "torch.utils.cpp_extension": ext})
    return torch

#!/usr/bin/env python3
"""datasets_check: the Python side of tests/gpu/test_datasets.sh (run on the GPU machine).

  load DIR...        every export directory loads with pyarrow.json.read_json (each shard, and
                     all shards of a directory cast to one unified schema, as datasets does) and
                     with pandas.read_json(lines=True); record counts match manifest.json; the
                     card's one-line Parquet conversion works and reads back; rl records carry
                     verl's fields with ground_truth as JSON text.
  kernelbench DIR    every module under DIR/kernelbench is built (torch load_inline when ninja is
                     there, else the same sources through setuptools without ninja, in parallel)
                     and its ModelNew compared with its Model (the problem's torch reference) on
                     random inputs at the small dims and the first alt dims, with the problem's
                     tolerance.
Prints one line per check and a summary; exit status 1 when a check failed. A part that cannot
run here says SKIP and why.
"""
import concurrent.futures
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def unify(schemas, pa):
    """One schema for all shards: a field null in one shard takes its type from the others."""
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except TypeError:  # pyarrow < 14
        return pa.unify_schemas(schemas)


def load_check(dirs):
    pd, pa, pj, pq = (optional(n) for n in ("pandas", "pyarrow", "pyarrow.json", "pyarrow.parquet"))
    if not pd and not pj:
        print("SKIP load: neither pandas nor pyarrow here")
        return True
    if not pj:
        print("SKIP load (pyarrow part): no pyarrow here; pandas only")
    if not pd:
        print("SKIP load (pandas part): no pandas here; pyarrow only")
    ok = True
    for d in dirs:
        manifest = json.load(open(os.path.join(d, "manifest.json")))
        fmt = manifest["record_format"]
        shards = sorted(os.path.join(d, s["name"]) for s in manifest["shards"])
        want = manifest["counts"]["records"]
        tables, rows_pd, rows = [], 0, None
        try:
            for s in shards:
                if pj:
                    tables.append(pj.read_json(s))
                if pd:
                    rows_pd += len(pd.read_json(s, lines=True))
            if pj:  # as datasets does: every shard cast to one schema
                schema = unify([t.schema for t in tables], pa) if tables else None
                rows = sum(t.cast(schema).num_rows for t in tables)
        except Exception as e:  # noqa: BLE001
            print("FAIL load %s: %r" % (fmt, e))
            ok = False
            continue
        if (pj and rows != want) or (pd and rows_pd != want):
            print("FAIL load %s: pyarrow %s rows, pandas %d, manifest %d" % (fmt, rows, rows_pd, want))
            ok = False
            continue
        train = sorted(glob.glob(os.path.join(d, "train-*.jsonl*")))
        parquet = pd and pq and train
        if parquet:  # the card's one-liner
            path = os.path.join(tempfile.mkdtemp(), "train.parquet")
            pd.concat(pd.read_json(f, lines=True) for f in train).to_parquet(path)
            back = pq.read_table(path)
            if back.num_rows != sum(s["records"] for s in manifest["shards"] if s["split"] == "train"):
                print("FAIL parquet %s: %d rows read back" % (fmt, back.num_rows))
                ok = False
        if fmt == "rl" and pd and shards:
            r = pd.read_json(shards[0], lines=True).iloc[0]
            truth = json.loads(r["reward_model"]["ground_truth"])
            if not (r["data_source"] and r["prompt"][0]["role"] and "reference_kernel" in truth):
                print("FAIL rl: verl fields")
                ok = False
        print("ok   load %-12s %d shards, %d records (%s)" % (
            fmt, len(shards), want, ", ".join(n for n, m in (("pyarrow", pj), ("pandas", pd),
                                                          ("parquet", parquet)) if m)))
    return ok


def ninja_available():
    try:
        from torch.utils.cpp_extension import verify_ninja_availability
        verify_ninja_availability()
        return True
    except Exception:  # noqa: BLE001
        return False


def import_path(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SETUP = """
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name=%(name)r, ext_modules=[CUDAExtension(%(name)r, ["main.cpp", "kernel.cu"],
      extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O3"]})],
      cmdclass={"build_ext": BuildExtension.with_options(use_ninja=False)})
"""


def build_one(path, work, use_ninja):
    """Builds a module's extension in a child process; returns (path, error or None, how)."""
    name = "m_" + os.path.basename(os.path.dirname(path))
    if use_ninja:
        code = ("import importlib.util, sys; s = importlib.util.spec_from_file_location(%r, %r); "
                "m = importlib.util.module_from_spec(s); s.loader.exec_module(m); m._load()") % (name, path)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        return path, (None if r.returncode == 0 else r.stderr[-3000:]), "load_inline"
    mod_src = open(path).read()
    ns = {}
    # the module's sources, without importing torch here
    import ast
    tree = ast.parse(mod_src)
    for n in tree.body:
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") in ("CUDA_SOURCE", "CPP_SOURCE", "EXTENSION_NAME"):
            ns[n.targets[0].id] = ast.literal_eval(n.value)
    d = os.path.join(work, ns["EXTENSION_NAME"])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kernel.cu"), "w") as f:
        f.write(ns["CUDA_SOURCE"])
    with open(os.path.join(d, "main.cpp"), "w") as f:
        f.write("#include <torch/extension.h>\n%s\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) "
                "{ m.def(\"kc_forward\", &kc_forward); }\n" % ns["CPP_SOURCE"])
    with open(os.path.join(d, "setup.py"), "w") as f:
        f.write(SETUP % {"name": ns["EXTENSION_NAME"]})
    r = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=d,
                       capture_output=True, text=True)
    return path, (None if r.returncode == 0 else (r.stdout + r.stderr)[-3000:]), "setuptools (no ninja)"


def compare(got, want, atol, rtol):
    import torch
    got = got.detach().flatten().double().cpu()
    want = want.detach().flatten().double().cpu()
    if got.numel() != want.numel():
        return False, "numel %d vs %d" % (got.numel(), want.numel())
    bad = ~torch.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    err = (got - want).abs().nan_to_num(float("inf")).max().item() if got.numel() else 0.0
    return not bool(bad.any()), "max |d| %.3g, %d of %d outside atol %g rtol %g" % (
        err, int(bad.sum()), got.numel(), atol, rtol)


def kernelbench_check(d, problems_root):
    try:
        import torch
    except ImportError as e:
        print("SKIP kernelbench: %s" % e)
        return True
    if not torch.cuda.is_available():
        print("SKIP kernelbench: torch sees no GPU")
        return True
    from torch.utils.cpp_extension import CUDA_HOME
    if not CUDA_HOME or not os.path.exists(os.path.join(CUDA_HOME, "bin", "nvcc")):
        print("SKIP kernelbench: no nvcc (torch's CUDA_HOME is %r): the modules cannot be built" % CUDA_HOME)
        return True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    use_ninja = ninja_available()
    if use_ninja:
        how = "load_inline"
    else:
        try:
            import setuptools  # noqa: F401
        except ImportError:
            print("SKIP kernelbench: neither ninja (torch load_inline) nor setuptools here")
            return True
        how = "setuptools without ninja (ninja not found: torch load_inline cannot run here)"
    paths = sorted(glob.glob(os.path.join(d, "kernelbench", "*", "*", "*.py")))
    work = tempfile.mkdtemp(prefix="kc-kb-build-")
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(work, "torch_extensions"))
    print("kernelbench: building %d modules with %s, nvcc from %s" % (len(paths), how, CUDA_HOME), flush=True)
    built = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        for path, error, _ in pool.map(lambda p: build_one(p, work, use_ninja), paths):
            built[path] = error
    ok, passed = True, 0
    for path in paths:
        pid = "/".join(path.split(os.sep)[-3:-1])
        if built[path]:
            print("FAIL kernelbench %s: build failed:\n%s" % (pid, built[path]))
            ok = False
            continue
        manifest = json.load(open(os.path.join(problems_root, pid + ".json")))
        mod = import_path(path, "kb_" + pid.replace("/", "_"))
        if not use_ninja:
            ext_dir = os.path.join(work, mod.EXTENSION_NAME)
            so = glob.glob(os.path.join(ext_dir, mod.EXTENSION_NAME + "*.so"))[0]
            mod._extension = import_path(so, mod.EXTENSION_NAME)
        atol, rtol = manifest["tolerance"]["atol"], manifest["tolerance"]["rtol"]
        sets = ["small"] + [k for k in mod.DIMS_SETS if k.startswith("alt")][:1]
        good = True
        for dims in sets:
            mod.DIMS = dict(mod.DIMS_SETS[dims])
            torch.manual_seed(11)
            try:
                inputs = [t.cuda() for t in mod.get_inputs()]
                with torch.no_grad():
                    want = mod.Model(*mod.get_init_inputs()).cuda()(*inputs)
                    got = mod.ModelNew(*mod.get_init_inputs()).cuda()(*inputs)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                print("FAIL kernelbench %s (%s): %r" % (pid, dims, e))
                good = False
                break
            want = want if isinstance(want, (tuple, list)) else (want,)
            got = got if isinstance(got, (tuple, list)) else (got,)
            for g, w in zip(got, want):
                same, detail = compare(g, w, atol, rtol)
                if not same:
                    print("FAIL kernelbench %s (%s): %s" % (pid, dims, detail))
                    good = False
        if good:
            passed += 1
            print("ok   kernelbench %-55s matches its torch reference on %s" % (pid, ",".join(sets)))
        ok &= good
    print("kernelbench: %d/%d modules match their torch reference (built with %s)" % (passed, len(paths), how))
    shutil.rmtree(work, ignore_errors=True)
    return ok


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    if sys.argv[1] == "load":
        return 0 if load_check(sys.argv[2:]) else 1
    if sys.argv[1] == "kernelbench":
        root = os.environ.get("KC_PROBLEMS", "problems")
        return 0 if kernelbench_check(sys.argv[2], root) else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())

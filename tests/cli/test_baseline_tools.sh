#!/bin/sh
# test_baseline_tools: the CPU-side parts of the GPU-side PyTorch tools (tools/baselines/), which
# run on a GPU machine: every one of them compiles (as python3 -m py_compile checks), and the --dry-run of
# baselines.py (eager and torch.compile timings) and calibrate_values.py (the value classes'
# margins) runs without torch (a torch package that refuses to import is first on the path) on
# all of level 3 and on a level-1 and a level-2 problem, and says what a GPU run would do:
# the level-3 Model is KernelBench's own, built as torch_model says (its constructor
# arguments evaluated at the dims: 003's [H] * L), its parameters loaded once before timing,
# the packed input's views counted as parameter tensors and elements (ResNet-18 11,689,512 in 62
# tensors, ResNet-101 44,549,160 in 314 from 89 views, VGG16 138,357,544: the published counts),
# and the constants with a "vary" (008's six BatchNorm views) listed as varied.
set -eu
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 0; }

export PYTHONDONTWRITEBYTECODE=1
for f in "$KC_ROOT"/tools/baselines/*.py "$KC_ROOT"/tools/problems/kcproblems.py; do
    # what python3 -m py_compile checks, without writing __pycache__ into the tree
    python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$f" \
        2>"$T/pyc" || fail "$f does not compile: $(cat "$T/pyc")"
done

mkdir -p "$T/notorch/torch"
echo 'raise ImportError("the dry run imported torch")' >"$T/notorch/torch/__init__.py"
export PYTHONPATH="$T/notorch"

B="python3 $KC_ROOT/tools/baselines/baselines.py --problems $KC_PROBLEMS"
C="python3 $KC_ROOT/tools/baselines/calibrate_values.py --root $KC_PROBLEMS"
$B --suite level3 --eager --compile --dry-run >"$T/b3" 2>"$T/err" ||
    fail "baselines --dry-run on level 3: $(cat "$T/err")"
grep -q '^dry run: 50 problems of level3, nothing timed or written$' "$T/b3" || fail "baselines: $(tail -3 "$T/b3")"
[ "$(grep -c ': would time eager, compile$' "$T/b3")" -eq 50 ] || fail "baselines: not 50 problems to time"
[ "$(grep -c 'parameters loaded once before timing$' "$T/b3")" -eq 50 ] ||
    fail "baselines: a level-3 problem would not time KernelBench's Model with its parameters loaded"
want() { # FILE PROBLEM TEXT: the lines of PROBLEM's entry hold TEXT
    awk -v p="$2" '/^[^ ]/ { on = index($0, p ":") == 1 } on' "$1" | grep -qF -- "$3" ||
        fail "$1: $2 lacks '$3'"
}
want "$T/b3" level3/003_deep_narrow_mlp "timed: KernelBench Model(8192, [1024, 1024, 1024,"
want "$T/b3" level3/003_deep_narrow_mlp "[module globals: batch_size=1024]"
want "$T/b3" level3/009_resnet18 "packed: 62 views holding 62 parameter tensors, 11689512 parameter elements"
want "$T/b3" level3/010_resnet101 "packed: 89 views holding 314 parameter tensors, 44549160 parameter elements"
want "$T/b3" level3/011_vgg16 "32 parameter tensors, 138357544 parameter elements"
want "$T/b3" level3/035_lstm "forward(x, h0, c0)"

$B --suite level1 --only 019_relu --eager --dry-run >"$T/b1" 2>"$T/err" ||
    fail "baselines --dry-run on level 1: $(cat "$T/err")"
want "$T/b1" level1/019_relu "timed: Model(B=4096, D=393216)(x)"
want "$T/b1" level1/019_relu "input x f32 [4096, 393216]: 1610612736 elements"
# a file that has the figure already: nothing left to time
echo '{"problems": {"level1/019_relu": {"eager_ms": 1.0}}}' >"$T/have.json"
$B --suite level1 --only 019_relu --eager --dry-run --out "$T/have.json" >"$T/b1b" 2>&1 ||
    fail "baselines --dry-run --out: $(cat "$T/b1b")"
want "$T/b1b" level1/019_relu "already in $T/have.json"

$C --suites level3 --dry-run >"$T/c3" 2>"$T/err" || fail "calibrate_values --dry-run on level 3: $(cat "$T/err")"
grep -q '^dry run: 50 problems, nothing run or written$' "$T/c3" || fail "calibrate: $(tail -3 "$T/c3")"
want "$T/c3" level3/008_resnet_basic_block "varied constants (plain and structured runs): 6 (params.bn1_g,"
want "$T/c3" level3/008_resnet_basic_block "model: KernelBench Model(3, 5, 1).forward(x)"
want "$T/c3" level3/003_deep_narrow_mlp "structure (atol x1024)"
want "$T/c3" level3/003_deep_narrow_mlp "packed: 6 views holding 8 parameter tensors, 872 parameter elements"
$C --suites level3 --only level3/008 --no-vary-inputs --dry-run >"$T/c3b" 2>&1 || fail "calibrate --no-vary-inputs"
want "$T/c3b" level3/008_resnet_basic_block "varied constants (plain and structured runs): off"
$C --suites level2 --only level2/084 --dry-run >"$T/c2" 2>"$T/err" || fail "calibrate on level 2: $(cat "$T/err")"
want "$T/c2" level2/084_gemm_batch_norm_scaling_softmax "params in turn: [{'eps': 1e-05}, {'eps': 0.01}, {'eps': 1.0}]"
want "$T/c2" level2/084_gemm_batch_norm_scaling_softmax "varied constants (plain and structured runs): 1 (scale)"
echo "ok: baselines.py and calibrate_values.py compile and dry-run on levels 1, 2 and 3 without torch"

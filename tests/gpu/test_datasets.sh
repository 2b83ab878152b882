#!/bin/sh
# test_datasets: the exports load where users load them, and exported kernels run as
# KernelBench modules. (a) A database with every verdict, flag and problem kind (kc_synth
# --every-kind) exported in sft, multiturn, rl and preference formats loads with
# pyarrow.json.read_json (each shard, and all shards cast to one schema) and
# pandas.read_json(lines=True), compile-only exports too; the card's Parquet one-liner works.
# (b) 13 level-1 references (two-launch batch norm with scratch, reductions, convolutions,
# softmax, attention, losses...), a level-2 chain, two attention-suite problems and three
# level-3 networks (an MLP, a ResNet block with training-mode BatchNorm, an LSTM: packed
# parameters, Model KernelBench's own source run as torch_model says)
# imported as candidates and exported with --format kernelbench are built with torch (load_inline
# when ninja is there, else setuptools without ninja) and each ModelNew matches its Model, the
# problem's torch reference, on random inputs at the small and first alt dims.
# Skips (saying what it could not run) without python3, torch, pyarrow/pandas, nvcc or a GPU.
set -eu
. "$(dirname "$0")/lib.sh"
: "${KC_BIN:?}" "${KC_ROOT:?}" "${KC_PROBLEMS:?}"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP test_datasets: no python3"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK="python3 $KC_ROOT/tests/gpu/datasets_check.py"

# (a) loading
"$KC_BIN/kc_synth" --db "$T/a.db" --candidates 800 --problems 12 --seed 9 --every-kind
"$KC_BIN/kcurate" run --db "$T/a.db" --heldout 'level2/004_synth_op' >/dev/null
dirs=""
for f in sft multiturn rl preference; do
    "$KC_BIN/kexport" --db "$T/a.db" --out "$T/$f" --format "$f" --verdict any --shard-mb 0.2 \
        --split train,valid,test,heldout >/dev/null || fail "kexport $f"
    dirs="$dirs $T/$f"
done
# a compile-only database (no GPU: no timing, error or evidence anywhere)
"$KC_BIN/kc_synth" --db "$T/c.db" --candidates 300 --problems 6 --seed 2 --every-kind
python3 - "$T/c.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("UPDATE verifications SET verdict = 'compiled', flags = '', max_abs_err = NULL,"
                " max_rel_err = NULL, rel_l2_err = NULL, evidence_json = NULL; DELETE FROM timings;")
c.commit()
PY
"$KC_BIN/kcurate" run --db "$T/c.db" >/dev/null
for f in sft multiturn; do
    "$KC_BIN/kexport" --db "$T/c.db" --out "$T/c-$f" --format "$f" --verdict any >/dev/null ||
        fail "kexport compile-only $f"
done
dirs="$dirs $T/c-sft $T/c-multiturn"
$CHECK load $dirs || fail "an export does not load with pyarrow/pandas"

# (b) KernelBench round trip
PROBLEMS="level1/001_square_matmul level1/019_relu level1/023_softmax level1/033_batch_norm
level1/037_frobenius_norm level1/040_layer_norm level1/047_sum_reduction
level1/063_conv2d_square_input_square_kernel level1/086_conv_depthwise_separable2d level1/089_cumsum
level1/095_cross_entropy_loss level1/097_scaled_dot_product_attention level1/099_triplet_margin_loss
level2/001_conv2d_relu_bias_add attention/002_causal_fp32 attention/006_document_causal
level3/001_mlp level3/008_resnet_basic_block level3/035_lstm"
for p in $PROBLEMS; do
    n=$(echo "$p" | tr / _)
    "$KC_BIN/kverify" problems --show-reference "$p" >"$T/$n.cu" || fail "show-reference $p"
    "$KC_BIN/kverify" import --db "$T/kb.db" --problem "$p" "$T/$n.cu" >/dev/null || fail "import $p"
done
"$KC_BIN/kcurate" run --db "$T/kb.db" >/dev/null
"$KC_BIN/kexport" --db "$T/kb.db" --out "$T/kb" --format kernelbench --verdict any \
    --split train,valid,test,heldout >/dev/null || fail "kexport kernelbench"
$CHECK load "$T/kb" || fail "the kernelbench export does not load"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/kernelbench" && cp -r "$T/kb/kernelbench/." "$OUT/kernelbench/"; fi
$CHECK kernelbench "$T/kb" || fail "a KernelBench module does not match its torch reference"

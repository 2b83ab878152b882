#!/bin/sh
# test_ref_emulated: the shared reference kernels of problems/shared/ run on the CPU
# (tests/emu/cuda_emu.h: a block's threads as fibers meeting at each barrier, warp collectives per
# warp, cp.async and the FP64 MMA in C++), each check of tests/emu/emu_*.cc built with ASan/UBSan
# and run against its plain loops; every program must exit 0 and print its summary line ("NAME:
# ..."); ASan stops at a read outside a buffer. emu_shared_refs.cc holds matmul_ref (the
# emulator's MMA layout, on a kernel the GPU has verified), conv2d_ref, conv2d_ref_split +
# conv2d_split_sum at KS 1-16 and conv2d_gemm_ref (6 drawn shapes here); emu_conv_linear.cc
# conv1d, conv3d (blocked and direct), depthwise, pointwise and linear; emu_conv_transpose.cc
# the transposed convolutions; emu_l2_rnn_ssd.cc level 2's epilogue kernels, the LSTM/GRU steps
# and Mamba-2's scan; emu_l3_ops.cc level 3's generic and attention kernels; emu_attention.cc
# the attention suite's kernel, all ten variants (fp16/bf16 from tests/emu/include/). Also: prep.py refuses
# a header with inline PTX it does not model, and a split that skips a chunk fails the check (so
# the check can fail). SKIP when clang++ is absent.
. "$KC_ROOT/tests/cli/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 absent"; exit 0; }
CXX=${CXX_EMU:-clang++}
command -v "$CXX" >/dev/null 2>&1 || { echo "SKIP: $CXX absent (make deps installs clang)"; exit 0; }
prep="$KC_ROOT/tests/emu/prep.py"
mkdir -p "$T/h" "$T/bad" "$T/bin"
for f in "$KC_PROBLEMS"/shared/*.cuh "$KC_PROBLEMS"/attention/shared/*.cuh; do
    python3 "$prep" "$f" "$T/h/$(basename "$f")" || fail "prep.py $(basename "$f")"
done
build() { # SOURCE OUT HEADER_DIR
    "$CXX" -std=c++17 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=undefined \
        -I"$KC_ROOT/tests/emu" -I"$KC_ROOT/tests/emu/include" -I"$3" "$1" -o "$2" 2>"$2.err"
}

# every check, built two at a time
names=""
for src in "$KC_ROOT"/tests/emu/emu_*.cc; do
    name=$(basename "$src" .cc)
    names="$names $name"
    build "$src" "$T/bin/$name" "$T/h" &
    [ $(($(echo "$names" | wc -w) % 2)) -eq 0 ] && wait
done
wait
[ -n "$names" ] || fail "no checks in tests/emu"
# every check run, two at a time; each writes its exit status beside its output
i=0
for name in $names; do
    [ -x "$T/bin/$name" ] || { cat "$T/bin/$name.err"; fail "$name does not build"; }
    draws=""
    [ "$name" = emu_shared_refs ] && draws=6
    { "$T/bin/$name" $draws >"$T/$name.out" 2>"$T/$name.stderr"; echo $? >"$T/$name.rc"; } &
    i=$((i + 1))
    [ $((i % 2)) -eq 0 ] && wait
done
wait
for name in $names; do
    [ "$(cat "$T/$name.rc")" = 0 ] ||
        { tail -20 "$T/$name.stderr"; fail "$name: the kernels disagree with plain loops on the CPU"; }
    grep -q "^$name: " "$T/$name.out" || fail "$name printed no summary: $(cat "$T/$name.out")"
    cat "$T/$name.out"
done
grep -q "agree with plain loops on 10 convolution shapes" "$T/emu_shared_refs.out" || fail "$(cat "$T/emu_shared_refs.out")"

# a split that drops the first chunk of its range must fail
cp "$T/h"/*.cuh "$T/bad/"
sed -i 's/const int kb = SPLIT ? (int)((long long)s \* nchunks \/ KS) : 0;/const int kb = SPLIT ? (int)((long long)s * nchunks \/ KS) + (KS > 1) : 0;/' "$T/bad/conv2d_ref.cuh"
grep -q "+ (KS > 1) : 0;" "$T/bad/conv2d_ref.cuh" || fail "the control's edit did not apply (conv2d_ref.cuh changed?)"
build "$KC_ROOT/tests/emu/emu_shared_refs.cc" "$T/emu-bad" "$T/bad" || { cat "$T/emu-bad.err"; fail "the control does not build"; }
"$T/emu-bad" 0 >/dev/null 2>"$T/err-bad" && fail "a split that skips a chunk passed the emulated check"
grep -q "conv2d_ref_split, " "$T/err-bad" || fail "the control failed for another reason: $(head -3 "$T/err-bad")"

# inline PTX the emulator does not model is refused, not compiled away
printf '__device__ void f(int *p) { asm volatile("red.global.add.u32 [%%0], 1;" :: "l"(p)); }\n' >"$T/ptx.cuh"
python3 "$prep" "$T/ptx.cuh" "$T/ptx.out" 2>"$T/ptx.err" && fail "prep.py accepted unknown PTX"
grep -q "inline PTX the emulator does not model" "$T/ptx.err" || fail "prep.py: $(cat "$T/ptx.err")"
echo ok

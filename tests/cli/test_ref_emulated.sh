#!/bin/sh
# test_ref_emulated: the shared convolution and matrix-product kernels of problems/shared/ run on
# the CPU (tools/emu/cuda_emu.h: a block's threads as fibers meeting at each barrier, cp.async and
# the FP64 MMA in C++), built with ASan/UBSan, against plain loops (tests/emu/emu_shared_refs.cc):
# matmul_ref (checks the emulator's MMA layout on a kernel the GPU has verified), conv2d_ref,
# conv2d_ref_split + conv2d_split_sum at KS 1, 2, 3, 7 and 16, and conv2d_gemm_ref on 4 fixed and
# 12 drawn shapes, every output within one float ulp; ASan stops at a read outside a buffer. Also:
# prep.py refuses a header with inline PTX it does not model, and a kernel with a wrong chunk range
# fails the check (so the check can fail). SKIP when clang++ cannot build with ASan here.
. "$KC_ROOT/tests/cli/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 absent"; exit 0; }
CXX=${CXX_EMU:-clang++}
command -v "$CXX" >/dev/null 2>&1 || { echo "SKIP: $CXX absent (make deps installs clang)"; exit 0; }
prep="$KC_ROOT/tools/emu/prep.py"
mkdir -p "$T/h" "$T/bad"
for f in conv2d_ref matmul_tiled_ref conv2d_gemm_ref; do
    python3 "$prep" "$KC_PROBLEMS/shared/$f.cuh" "$T/h/$f.cuh" || fail "prep.py $f.cuh"
done
build() { # OUT HEADER_DIR
    "$CXX" -std=c++17 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=undefined \
        -I"$KC_ROOT/tools/emu" -I"$2" "$KC_ROOT/tests/emu/emu_shared_refs.cc" -o "$1" 2>"$T/cxx.err"
}
build "$T/emu" "$T/h" || { cat "$T/cxx.err"; fail "emu_shared_refs does not build"; }
"$T/emu" 12 >"$T/out" 2>"$T/err" || { tail -20 "$T/err"; fail "the shared kernels disagree with plain loops on the CPU"; }
grep -q "agree with plain loops on 16 convolution shapes" "$T/out" || fail "$(cat "$T/out")"

# a split that drops the first chunk of its range must fail
cp "$T/h"/*.cuh "$T/bad/"
sed -i 's/const int kb = SPLIT ? (int)((long long)s \* nchunks \/ KS) : 0;/const int kb = SPLIT ? (int)((long long)s * nchunks \/ KS) + (KS > 1) : 0;/' "$T/bad/conv2d_ref.cuh"
grep -q "+ (KS > 1) : 0;" "$T/bad/conv2d_ref.cuh" || fail "the control's edit did not apply (conv2d_ref.cuh changed?)"
build "$T/emu-bad" "$T/bad" || { cat "$T/cxx.err"; fail "the control does not build"; }
"$T/emu-bad" 0 >/dev/null 2>"$T/err-bad" && fail "a split that skips a chunk passed the emulated check"
grep -q "conv2d_ref_split, " "$T/err-bad" || fail "the control failed for another reason: $(head -3 "$T/err-bad")"

# inline PTX the emulator does not model is refused, not compiled away
printf '__device__ void f(int *p) { asm volatile("red.global.add.u32 [%%0], 1;" :: "l"(p)); }\n' >"$T/ptx.cuh"
python3 "$prep" "$T/ptx.cuh" "$T/ptx.out" 2>"$T/ptx.err" && fail "prep.py accepted unknown PTX"
grep -q "inline PTX the emulator does not model" "$T/ptx.err" || fail "prep.py: $(cat "$T/ptx.err")"
echo ok

#!/bin/sh
# test_cubin_cache: reference cubins persist across runs (issue 37). `kverify warm` compiles the
# references of a selection into the cache and says so; a second warm compiles none (its counts,
# and the entries' inodes: nothing was stored again); a damaged entry is compiled again; another
# arch is another entry; KC_CUBIN_CACHE and XDG_CACHE_HOME name the directory; one that cannot be
# made is one warning, and warm says nothing was kept (exit 1). A verification (kverify check
# with a stand-in GPU worker, fixtures/fake_kverify_gpu.sh) finds the entry warm made, and its
# own reference compile is kept for the next run. NVRTC runs on the CPU: no GPU needed.
. "$KC_ROOT/tests/cli/lib.sh"
SEL=level1/019_relu,level1/020_leaky_relu
warm() { "$KC_BIN/kverify" warm "$@" >"$T/out" 2>"$T/err"; }
inodes() { ls -i "$1" | sort -k2; }

# ---- warm, and warm again ----
export KC_CUBIN_CACHE="$T/c"
warm --suite "$SEL" || fail "warm: $(cat "$T/out" "$T/err")"
grep -q "^2 references for sm_90 (NVRTC [0-9.]*): 2 compiled, 0 already cached" "$T/out" ||
    fail "first warm: $(cat "$T/out")"
[ "$(ls "$T/c" | grep -c '\.cubin$')" -eq 2 ] || fail "two entries expected: $(ls "$T/c")"
inodes "$T/c" >"$T/inodes1"
warm --suite level1/019_relu --suite level1/020_leaky_relu || fail "second warm: $(cat "$T/out" "$T/err")"
grep -q "2 references for sm_90 (NVRTC [0-9.]*): 0 compiled, 2 already cached" "$T/out" ||
    fail "the second warm compiled: $(cat "$T/out")"
grep -q '^compiled' "$T/out" && fail "the second warm compiled: $(cat "$T/out")"
inodes "$T/c" >"$T/inodes2"
cmp -s "$T/inodes1" "$T/inodes2" || fail "the second warm stored entries again"
[ -s "$T/err" ] && fail "warm said something on stderr: $(cat "$T/err")"

# ---- a damaged entry is compiled again, never loaded ----
entry=$(ls "$T/c"/*.cubin | head -1)
head -c 200 "$entry" >"$T/cut" && cp "$T/cut" "$entry"
warm --suite "$SEL" || fail "warm over a damaged entry: $(cat "$T/out" "$T/err")"
grep -q "1 compiled, 1 already cached (1 damaged entry compiled again)" "$T/out" ||
    fail "a cut entry was not compiled again: $(cat "$T/out")"
grep -q '^recompiled' "$T/out" || fail "no recompiled line: $(cat "$T/out")"
warm --suite "$SEL" && grep -q "0 compiled, 2 already cached" "$T/out" ||
    fail "the recompiled entry was not stored: $(cat "$T/out")"

# ---- another arch is another entry ----
warm --suite "$SEL" --arch sm_90,sm_80 || fail "warm two archs: $(cat "$T/out" "$T/err")"
grep -q "references for sm_90,sm_80 (NVRTC [0-9.]*): 2 compiled, 2 already cached" "$T/out" ||
    fail "sm_80 did not key differently: $(cat "$T/out")"
[ "$(ls "$T/c" | grep -c '\.cubin$')" -eq 4 ] || fail "four entries expected: $(ls "$T/c")"
ls -a "$T/c" | grep -q tmp && fail "a temporary file was left: $(ls -a "$T/c")"
warm --arch sm90 && fail "warm --arch sm90 was accepted"
grep -q "arch takes real GPU architectures" "$T/err" || fail "bad arch: $(cat "$T/err")"

# ---- where: XDG_CACHE_HOME without KC_CUBIN_CACHE ----
( unset KC_CUBIN_CACHE; XDG_CACHE_HOME="$T/xdg" warm --suite level1/019_relu ) ||
    fail "warm under XDG_CACHE_HOME: $(cat "$T/out" "$T/err")"
[ "$(ls "$T/xdg/kcorpus/cubins" | grep -c '\.cubin$')" -eq 1 ] ||
    fail "no entry under XDG_CACHE_HOME/kcorpus/cubins: $(cat "$T/out")"

# ---- a directory that cannot be made: one warning, no cache ----
echo x >"$T/file"
KC_CUBIN_CACHE="$T/file/cubins" warm --suite "$SEL" && fail "warm into an unusable cache exited 0"
grep -q "2 compiled, 0 already cached" "$T/out" || fail "unusable cache: $(cat "$T/out")"
grep -q "nothing compiled was kept" "$T/out" || fail "unusable cache not said: $(cat "$T/out")"
[ "$(grep -c 'warning: the cubin cache' "$T/err")" -eq 1 ] ||
    fail "one warning expected: $(cat "$T/err")"

# ---- a verification finds warm's entry, and keeps its own compile ----
export KC_KVERIFY_GPU="$KC_ROOT/tests/cli/fixtures/fake_kverify_gpu.sh"
check() {
    "$KC_BIN/kverify" check --problem level1/019_relu "$KC_PROBLEMS/level1/019_relu.cu" \
        >"$T/check.out" 2>"$T/check.err" || fail "check: $(cat "$T/check.out" "$T/check.err")"
    grep -q "level1/019_relu: correct" "$T/check.out" || fail "check: $(cat "$T/check.out")"
}
export KC_CUBIN_CACHE="$T/v"
warm --suite level1/019_relu || fail "warm: $(cat "$T/out" "$T/err")"
inodes "$T/v" >"$T/v1"
check
inodes "$T/v" >"$T/v2"
cmp -s "$T/v1" "$T/v2" || fail "the verification compiled the reference warm had kept"
rm -rf "$T/v"
check
[ "$(ls "$T/v" | grep -c '\.cubin$')" -eq 1 ] || fail "the verification kept no reference cubin"
inodes "$T/v" >"$T/v3"
check
inodes "$T/v" >"$T/v4"
cmp -s "$T/v3" "$T/v4" || fail "the second verification compiled the reference again"
KC_CUBIN_CACHE="$T/file/cubins" check
[ "$(grep -c 'warning: the cubin cache' "$T/check.err")" -eq 1 ] ||
    fail "a verification with an unusable cache: $(cat "$T/check.err")"
echo "ok: warm, warm again, damaged entry, arch, XDG_CACHE_HOME, unusable cache, verification"

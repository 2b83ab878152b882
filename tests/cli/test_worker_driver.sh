#!/bin/sh
# test_worker_driver: kverify-gpu starts without the NVIDIA driver (issue 35, item 11), because
# it loads libcuda at run time (verify/worker/worker_driver.c) instead of being linked with it:
# - --version and --help print on stdout, exit 0 (the dynamic loader refused to start it);
# - arguments are checked before the driver is loaded: usage errors and an unknown problem are
#   one line, exit 4;
# - without the driver (KC_LIBCUDA names a library that is not there, or one that is not a
#   driver) each command says so in one line: gpus exits 3 ("0" for --count) as kverify gpus
#   does, dump 4, the worker sends it as its fatal hello and exits 4;
# - kverify dump exits 4 (not the verdict status 3) and kverify gpus 3 both when kverify's own
#   probe finds no driver and when it passes but kverify-gpu cannot use one (it exited 1);
# - completeness: every driver symbol the objects linked into kverify-gpu reference is defined
#   by the loader, each is one the toolkit's libcuda stub exports (a versioned name such as
#   cuMemAlloc_v2, so a GPU run cannot fail on a missing symbol), kverify-gpu has no NEEDED entry
#   for libcuda and exports none of the wrappers (libcuda and CUPTI cannot bind to them).
set -u
. "$(dirname "$0")/lib.sh"
gpu="$KC_BIN/kverify-gpu"
kv="$KC_BIN/kverify"
OBJ="$KC_BIN/../obj"
NO_DRIVER=libkc-no-such-driver.so.1
MISSING="^kverify-gpu: error: the NVIDIA driver \\($NO_DRIVER\\) cannot be loaded: .*$NO_DRIVER"

# run NAME COMMAND...: stdout in NAME.out, stderr in NAME.err, the status in RC
run() { name=$1; shift; RC=0; "$@" >"$T/$name.out" 2>"$T/$name.err" || RC=$?; }
# one_line NAME STATUS PATTERN COMMAND...: exit STATUS, one line on stderr matching PATTERN
one_line() {
    name=$1 want=$2 pat=$3; shift 3
    run "$name" "$@"
    [ "$RC" -eq "$want" ] || fail "$name: exit $RC, not $want: $(cat "$T/$name.err")"
    [ "$(wc -l <"$T/$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$T/$name.err")"
    grep -Eq -- "$pat" "$T/$name.err" || fail "$name: '$(cat "$T/$name.err")' does not match '$pat'"
}

# ---- --version and --help: stdout, exit 0, with or without a driver ----
for env in "" "KC_LIBCUDA=$NO_DRIVER"; do
    run version env $env "$gpu" --version
    [ "$RC" -eq 0 ] && [ ! -s "$T/version.err" ] || fail "--version ($env): exit $RC: $(cat "$T/version.err")"
    grep -qx "kverify-gpu $(cat "$KC_ROOT/VERSION")" "$T/version.out" || fail "--version: $(cat "$T/version.out")"
    for args in --help -h "dump --help" "worker --help"; do
        run help env $env "$gpu" $args
        [ "$RC" -eq 0 ] && [ ! -s "$T/help.err" ] || fail "$args ($env): exit $RC: $(cat "$T/help.err")"
        head -1 "$T/help.out" | grep -q "^usage: kverify-gpu" || fail "$args: $(head -2 "$T/help.out")"
    done
done

# ---- arguments first: usage errors never reach the driver ----
export KC_LIBCUDA=$NO_DRIVER
one_line noargs 4 "^kverify-gpu: error: no command" "$gpu"
one_line unknown 4 "^kverify-gpu: error: unknown command 'frob'" "$gpu" frob
one_line dump-out 4 "^kverify-gpu dump: error: dump needs --problem ID and --out DIR; see 'kverify-gpu dump --help'$" \
    "$gpu" dump --problem level1/019_relu
one_line dump-dev 4 "^kverify-gpu dump: error: --device takes a whole number" \
    "$gpu" dump --problem level1/019_relu --out "$T/d" --device x
one_line dump-profile 4 "^kverify-gpu dump: error: --profile takes a whole number from 1 to 100, not '0'" \
    "$gpu" dump --problem level1/019_relu --out "$T/d" --profile 0
one_line dump-problem 4 "^kverify-gpu: error: no problem 'level1/000_nope'" \
    "$gpu" dump --problem level1/000_nope --out "$T/d"
one_line worker-dev 4 "^kverify-gpu worker: error: worker needs --device N" "$gpu" worker
one_line sanitize-dev 4 "^kverify-gpu sanitize: error: --device needs a value" "$gpu" sanitize --device

# ---- no driver: one line, the status of the kverify command ----
one_line gpus 3 "$MISSING" "$gpu" gpus
one_line count 3 "$MISSING" "$gpu" gpus --count
[ "$(cat "$T/count.out")" = 0 ] || fail "gpus --count without a driver: $(cat "$T/count.out")"
one_line dump 4 "$MISSING" "$gpu" dump --problem level1/019_relu --seed 1 --out "$T/d"
one_line dump-profiled 4 "$MISSING" "$gpu" dump --problem level1/019_relu --seed 1 --out "$T/d" --profile 3
[ ! -e "$T/d" ] || fail "dump made its directory without a GPU"
one_line notdriver 4 "^kverify-gpu: error: the NVIDIA driver \\(libc.so.6\\) has no cuInit" \
    env KC_LIBCUDA=libc.so.6 "$gpu" dump --problem level1/019_relu --out "$T/d"
run worker "$gpu" worker --device 0 </dev/null
[ "$RC" -eq 4 ] || fail "worker without a driver: exit $RC"
grep -q '"fatal": *"the NVIDIA driver ('$NO_DRIVER') cannot be loaded' "$T/worker.out" ||
    fail "worker's hello: $(cat "$T/worker.out") $(cat "$T/worker.err")"

# ---- through kverify: its probe finds no driver, or passes (libc.so.6 loads) and the worker
# cannot use it ----
one_line kv-dump 4 "no NVIDIA driver found" "$kv" dump --problem level1/019_relu --out "$T/d"
one_line kv-dump-worker 4 "^kverify-gpu: error: the NVIDIA driver \\(libc.so.6\\) has no cuInit" \
    env KC_LIBCUDA=libc.so.6 "$kv" dump --problem level1/019_relu --out "$T/d"
one_line kv-gpus-worker 3 "has no cuInit" env KC_LIBCUDA=libc.so.6 "$kv" gpus
unset KC_LIBCUDA

# ---- completeness of the loader's table ----
loader="$OBJ/verify/worker/worker_driver.o"
[ -f "$loader" ] || fail "no $loader"
nm --defined-only "$loader" | awk '$2 == "T" && $3 ~ /^cu[A-Z]/ { print $3 }' | sort >"$T/defined"
for want in cuInit cuMemAlloc_v2 cuEventElapsedTime_v2 cuLaunchKernel; do
    grep -qx "$want" "$T/defined" || fail "the loader does not define $want"
done
for o in $(find "$OBJ/verify" "$OBJ/common" "$OBJ/gen" -name '*.o' ! -path "$loader"); do
    nm --undefined-only "$o" | awk '$2 ~ /^cu[A-Z]/ { print $2 }'
done | sort -u >"$T/used"
[ -s "$T/used" ] || fail "no driver symbol used by any object: wrong object directory $OBJ?"
missing=$(comm -23 "$T/used" "$T/defined")
[ -z "$missing" ] || fail "driver symbols used but not loaded by worker_driver.c: $missing"
stub="${CUDA:-/usr/local/cuda}/lib64/stubs/libcuda.so"
if [ -f "$stub" ]; then
    nm -D --defined-only "$stub" | awk '{ print $NF }' | sort -u >"$T/stub"
    unknown=$(comm -23 "$T/defined" "$T/stub")
    [ -z "$unknown" ] || fail "loaded under a name libcuda does not export: $unknown"
fi
! readelf -d "$gpu" | grep -q 'NEEDED.*libcuda' || fail "kverify-gpu is linked with libcuda"
! nm -D --defined-only "$gpu" | awk '{ print $NF }' | grep -q '^cu[A-Z]' ||
    fail "kverify-gpu exports driver symbols: $(nm -D --defined-only "$gpu" | grep ' cu[A-Z]')"
exit 0

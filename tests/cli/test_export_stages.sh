#!/bin/sh
# test_export_stages: an export killed with kill -9 leaves its .kexport-stage-<pid>/ behind; the
# next export into the same directory removes the stages of processes that are gone (and of
# pids now used by another program), and leaves the stage of a kexport that still runs alone.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems level1/019_relu --db "$DB" --compile-only \
    --turns 1 >/dev/null 2>&1 || fail "kcollect"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null
OUT="$T/out"
mkdir -p "$OUT"
# A real kill -9 in the middle of an export (whatever it had written by then).
("$KC_BIN/kexport" --db "$DB" --out "$OUT" --format sft --every-turn --verdict any >/dev/null 2>&1 & echo $! >"$T/pid"; wait) &
sub=$!
sleep 0.2; kill -9 "$(cat "$T/pid")" 2>/dev/null || true; wait $sub || true
# A stage of a process that is gone: a child that has exited (its pid is free).
sh -c 'exit 0' & dead=$!
wait $dead
mkdir -p "$OUT/.kexport-stage-$dead"; head -c 100000 /dev/urandom >"$OUT/.kexport-stage-$dead/train.00000.part"
# A stage of a live kexport (a process whose name is kexport), and of a live other program.
cp "$(command -v sleep)" "$T/kexport"
"$T/kexport" 30 & live=$!
sleep 30 & other=$!
mkdir -p "$OUT/.kexport-stage-$live" "$OUT/.kexport-stage-$other"
"$KC_BIN/kexport" --db "$DB" --out "$OUT" --format sft --every-turn --verdict any >/dev/null 2>"$T/err" ||
    { cat "$T/err"; fail "export failed"; }
kill "$live" "$other" 2>/dev/null || true
[ ! -e "$OUT/.kexport-stage-$dead" ] || fail "the stage of a dead export is still there"
[ ! -e "$OUT/.kexport-stage-$other" ] || fail "the stage of a pid reused by another program is still there"
[ -d "$OUT/.kexport-stage-$live" ] || fail "the stage of a running kexport was removed"
[ "$(ls -a "$OUT" | grep -c '^\.kexport-stage-')" = 1 ] || fail "stages left: $(ls -a "$OUT" | grep kexport-stage)"
grep -q "removed .*kexport-stage-$dead" "$T/err" || fail "the removal is not said"
[ -s "$OUT/manifest.json" ] || fail "no manifest"
echo ok

#!/bin/sh
# test_export_empty: an export that writes no record says why (which filter removed what) and
# which flag would give records, in every format; it exits 1 (with or without the old --strict)
# and writes no manifest, dataset card or bundle pointing at shards that do not exist (issue 24);
# the suggested flag does give records. The database is what a compile-only run (no GPU) leaves:
# no kernel is correct, the best are 'compiled'.
set -eu
. "$(dirname "$0")/lib.sh"

"$KC_BIN/kc_synth" --db "$T/a.db" --candidates 200 --problems 5 --seed 2 --every-kind
sqlite3 "$T/a.db" "UPDATE verifications SET verdict = 'compiled', flags = '' WHERE verdict = 'correct';
                   DELETE FROM timings;"
"$KC_BIN/kcurate" run --db "$T/a.db" >/dev/null

run_export() { # NAME kexport-options... : exit status in $T/NAME.rc, stderr in $T/NAME.err
    name=$1; shift
    set +e
    "$KC_BIN/kexport" --db "$T/a.db" --out "$T/$name" "$@" >"$T/$name.out" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
    set -e
    ! grep -q Sanitizer "$T/$name.err" || fail "$name: sanitizer report: $(cat "$T/$name.err")"
}
says() { grep -qF -- "$2" "$T/$1.err" || fail "$1: expected '$2' in: $(cat "$T/$1.err")"; }

# sft: the default verdict (correct) removes everything; the hint is --verdict compiled
run_export sft --format sft
[ "$(cat "$T/sft.rc")" -eq 1 ] || fail "an empty export must exit 1"
says sft "error: 0 sft records exported; nothing written to $T/sft"
[ ! -e "$T/sft" ] || fail "an empty export left $(ls "$T/sft")"
run_export sft-tar --format sft --tar
[ "$(cat "$T/sft-tar.rc")" -eq 1 ] || fail "an empty --tar export must exit 1"
[ ! -e "$T/sft-tar.tar" ] && [ ! -e "$T/sft-tar" ] || fail "an empty --tar export wrote a bundle or directory"
# into a directory with files: they stay, and no manifest or card is added
mkdir "$T/kept"; echo keep >"$T/kept/notes.txt"
run_export kept --format sft
[ "$(ls "$T/kept")" = notes.txt ] || fail "an empty export added to a directory: $(ls "$T/kept")"
says sft "0 sft records: why"
says sft "kernels of these problems by verdict: compiled "
says sft "sft keeps kernels whose verdict is correct (--verdict, default correct): 0"
says sft "try: --verdict compiled"
run_export sft-strict --format sft --strict
[ "$(cat "$T/sft-strict.rc")" -eq 1 ] || fail "--strict on an empty export must exit 1"
says sft-strict "0 sft records: why"
run_export sft-hint --format sft --verdict compiled --strict
[ "$(cat "$T/sft-hint.rc")" -eq 0 ] || fail "the suggested --verdict compiled gives no record: $(cat "$T/sft-hint.err")"
grep -q '^exported [1-9][0-9]* sft records' "$T/sft-hint.out" || fail "no sft record with --verdict compiled"
[ ! -s "$T/sft-hint.err" ] || fail "a non-empty export explains nothing: $(cat "$T/sft-hint.err")"

# --min-speedup after the verdict filter
run_export sft-speed --format sft --verdict compiled --min-speedup 2 --strict
[ "$(cat "$T/sft-speed.rc")" -eq 1 ] || fail "sft --min-speedup: expected exit 1"
says sft-speed "with an eager speedup >= 2 (--min-speedup): 0"

# splits: no held-out problem
run_export split --format rl --split heldout --strict
[ "$(cat "$T/split.rc")" -eq 1 ] || fail "rl on an empty split: expected exit 1"
says split "problems in splits heldout: 0 (all problems by split: train 5)"
says split "try: --split train,valid,test,heldout"

# multiturn: a verdict list keeps solved trajectories only
run_export mt --format multiturn --verdict correct --strict
says mt "keeps solved trajectories only"
says mt "try: --verdict any"
run_export mt-any --format multiturn --verdict any --strict
[ "$(cat "$T/mt-any.rc")" -eq 0 ] || fail "multiturn --verdict any: $(cat "$T/mt-any.err")"

# preference: the pairing rule, and why it fails here (no correct kernel)
run_export pref --format preference --strict
[ "$(cat "$T/pref.rc")" -eq 1 ] || fail "preference without correct kernels: expected exit 1"
says pref "preference pairs a correct kernel (chosen) with a kernel of the same problem that is not correct"
says pref "chosen candidates 0, rejected candidates "
says pref "no kernel is known correct: this looks like a compile-only run"

# preference with correct kernels but a --verdict that no rejected kernel has
"$KC_BIN/kc_synth" --db "$T/b.db" --candidates 200 --problems 5 --seed 2
sqlite3 "$T/b.db" "DELETE FROM verifications WHERE verdict = 'timeout'"
"$KC_BIN/kcurate" run --db "$T/b.db" >/dev/null
set +e
"$KC_BIN/kexport" --db "$T/b.db" --out "$T/pref2" --format preference --verdict timeout --strict \
    >/dev/null 2>"$T/pref2.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "preference --verdict timeout: expected exit 1, got $rc"
grep -qF "rejected candidates 0" "$T/pref2.err" || fail "pref2: $(cat "$T/pref2.err")"
grep -qF "try: --verdict any" "$T/pref2.err" || fail "pref2 hint: $(cat "$T/pref2.err")"
echo "ok: empty exports explain themselves, exit 1 and write nothing"

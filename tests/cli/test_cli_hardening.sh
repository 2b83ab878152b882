#!/bin/sh
# test_cli_hardening: files, flags and words a user hits (issue 15).
# - A SQLite file that is not a kcorpus database is refused by every tool and left untouched
#   (kcurate and kexport installed our schema into it); an empty one only by a creating command.
# - A read-only database (file and directory not writable) serves kcurate stats and kexport.
# - kexport filter values are checked, naming the valid ones; unknown options are named
#   (kcurate run --wat said "needs a value").
# - Problems are found from a binary outside bin/ (build/NAME/bin), and "no problems match"
#   says how they are looked up (KC_PROBLEMS).
# - kcollect checks the database before starting the bundled server, leaves no new database
#   after a failure before its start and no lock file after a clean exit.
# - Compile-only: kcurate stats says how many trajectories kcollect called solved (compiled), and
#   prints '-' for means over no solved trajectory.
# - Error paths are leak-free under LSan (kcollect without arguments, a problem that fails to
#   load in kverify problems --check, ...) and print their message; a reference with device
#   globals (a namespace-scope constant) fails kverify problems --check.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$T"
leaks() { ! grep -q "LeakSanitizer" "$1" || { cat "$1"; fail "leak on an error path: $2"; }; }
refused() { # name expected-words command...
    name=$1 words=$2; shift 2
    rc=0
    "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [ $rc -ne 0 ] || fail "$name: exit 0"
    grep -q -- "$words" "$T/$name.err" || fail "$name: no '$words' in: $(cat "$T/$name.err")"
    leaks "$T/$name.err" "$name"
}

# ---- not ours ----
sqlite3 other.db "CREATE TABLE notes(x); INSERT INTO notes VALUES ('mine'); PRAGMA user_version = 3;"
before=$(sqlite3 other.db ".schema"; sqlite3 other.db "PRAGMA user_version")
refused curate_other "not a kcorpus one" "$KC_BIN/kcurate" run --db other.db
refused stats_other "not a kcorpus one" "$KC_BIN/kcurate" stats --db other.db
refused export_other "not a kcorpus one" "$KC_BIN/kexport" --db other.db --out e_other
refused collect_other "not a kcorpus one" "$KC_BIN/kcollect" --problems level1/019_relu --db other.db --compile-only
! grep -q "bundled test LLM server" "$T/collect_other.err" || fail "kcollect started the bundled server before checking the database"
refused import_other "not a kcorpus one" "$KC_BIN/kverify" import --db other.db --problem level1/019_relu "$KC_PROBLEMS/level1/019_relu.cu"
[ "$(sqlite3 other.db ".schema"; sqlite3 other.db "PRAGMA user_version")" = "$before" ] || fail "a foreign database was changed"
: >empty.db
refused curate_empty "is empty, not a kcorpus database" "$KC_BIN/kcurate" run --db empty.db
[ ! -s empty.db ] || fail "kcurate wrote into an empty file"

# ---- a new database is made only by a run that starts ----
refused collect_nodir "cannot create the database" "$KC_BIN/kcollect" --problems level1/019_relu --db nodir/kc.db --compile-only
refused collect_noprob "KC_PROBLEMS" "$KC_BIN/kcollect" --problems level1/nothing_here --db new.db --compile-only
[ ! -e new.db ] || fail "a failed kcollect left a database file"
! grep -q "bundled test LLM server" "$T/collect_noprob.err" || fail "kcollect started the bundled server before checking the problems"

# ---- flags and words ----
refused collect_wat "unknown option '--wat'" "$KC_BIN/kcollect" --problems level1/019_relu --wat
refused curate_wat "unknown option '--wat'" "$KC_BIN/kcurate" run --wat
refused collect_noargs "no problems selected" "$KC_BIN/kcollect"

# ---- a compile-only run; the database afterwards ----
"$KC_BIN/kcollect" --problems level1/019_relu --db kc.db --compile-only >c.out 2>c.err || { cat c.err; fail "kcollect"; }
ls kc.db* | grep -q lock && fail "a lock file stayed after a clean exit: $(ls)"
grep -q "solved 1 (compile-only" c.out || fail "kcollect's summary: $(cat c.out)"
"$KC_BIN/kcurate" run --db kc.db >/dev/null || fail "kcurate run"
"$KC_BIN/kcurate" stats --db kc.db >stats.out || fail "kcurate stats"
grep -q "solved, compile-only *1 of 1" stats.out || fail "kcurate stats does not count what kcollect solved: $(cat stats.out)"
# nothing ran on a GPU, so no trajectory is solved: its means are unknown, not 0
grep -q "mean best speedup *-$" stats.out || fail "a mean over no solved trajectory: $(cat stats.out)"
grep -q "mean first correct turn *-$" stats.out || fail "a mean over no solved trajectory: $(cat stats.out)"

for bad in "--verdict bogus" "--split bogus" "--level 0" "--level 1,x" "--min-speedup fast" "--min-speedup nan" "--gzip-level 11" "--max-pairs -1"; do
    set -- $bad
    refused "export_$1" "$1" "$KC_BIN/kexport" --db kc.db --out e_bad $bad
done
grep -q "not one of correct, compiled, mismatch" "$T/export_--verdict.err" || fail "--verdict: valid values not named"
grep -q "not one of train, valid, test, heldout" "$T/export_--split.err" || fail "--split: valid values not named"
"$KC_BIN/kexport" --db kc.db --out e_ok --verdict compiled,correct --split train,valid,test,heldout --level 1 \
    --min-speedup 0 --no-gzip >/dev/null 2>e_ok.err || fail "kexport with valid filters: $(cat e_ok.err)"

# ---- read-only ----
sqlite3 kc.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
mkdir ro && cp kc.db ro/ && chmod 444 ro/kc.db && chmod 555 ro
as_reader() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
chmod 755 "$T"
as_reader env KC_PROBLEMS="$KC_PROBLEMS" "$KC_BIN/kcurate" stats --db "$T/ro/kc.db" >ro.out 2>ro.err \
    || fail "kcurate stats on a read-only database: $(cat ro.err)"
grep -q "solved, compile-only" ro.out || fail "read-only stats: $(cat ro.out)"
as_reader env KC_PROBLEMS="$KC_PROBLEMS" "$KC_BIN/kexport" --db "$T/ro/kc.db" --out /tmp/kc-ro-export-$$ \
    --verdict compiled --no-gzip >ro2.out 2>ro2.err || { rm -rf /tmp/kc-ro-export-$$; fail "kexport on a read-only database: $(cat ro2.err)"; }
rm -rf /tmp/kc-ro-export-$$
chmod 755 ro
[ "$(ls ro)" = kc.db ] || fail "the read-only directory got files: $(ls ro)"

# ---- problems from a binary outside bin/, and the words when none match ----
(cd / && env -u KC_PROBLEMS "$KC_BIN/kverify" problems --suite level1 >"$T/list.out" 2>"$T/list.err") \
    || fail "kverify from $KC_BIN without KC_PROBLEMS: $(cat "$T/list.err")"
grep -q "019_relu" list.out || fail "problems not found from $KC_BIN"
refused noprob "KC_PROBLEMS" env KC_PROBLEMS=/nonexistent "$KC_BIN/kverify" problems --suite level1 --check

# ---- leak-free error paths ----
mkdir -p badp/level1
cp "$KC_PROBLEMS/level1/019_relu.json" badp/level1/   # its .cu is missing: fails late in loading
rc=0
KC_PROBLEMS="$T/badp" "$KC_BIN/kverify" problems --check >badp.out 2>badp.err || rc=$?
[ $rc -ne 0 ] && grep -q "FAIL level1/019_relu" badp.out && grep -q "1 problems, 0 references compiled" badp.out \
    || fail "kverify problems --check on a broken problem: $rc $(cat badp.out badp.err)"
leaks badp.err "kverify problems --check"

# ---- a reference with device globals fails the check (docs/PROBLEMS.md): a namespace-scope
# constant gets device storage under -default-device, and the module would be reloaded before
# every execution as a candidate ----
mkdir -p globp/level1
cp "$KC_PROBLEMS/level1/019_relu.json" globp/level1/
{ echo "namespace q { constexpr float zero = 0.0f; }"
  sed 's/v > 0.0f ? v : 0.0f/v > q::zero ? v : q::zero/' "$KC_PROBLEMS/level1/019_relu.cu"; } >globp/level1/019_relu.cu
grep -q "q::zero" globp/level1/019_relu.cu || fail "the test's reference edit did not apply"
rc=0
KC_PROBLEMS="$T/globp" "$KC_BIN/kverify" problems --check >globp.out 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "FAIL level1/019_relu" globp.out && grep -q "device globals" globp.out ||
    fail "a reference with a namespace-scope constant passed the check: $rc $(cat globp.out)"
echo ok

#!/bin/sh
# test_cli_language: every tool speaks one language (issue 35), through the one option parser of
# common/cli.c:
# - each subcommand's --help prints its own usage on stdout, exit 0 (kverify serve --help printed
#   kverify's general usage; kcurate run --help kcurate's);
# - a usage error is one line naming the option, "see 'TOOL CMD --help'", the tool's usage status
#   (2; kverify 4): serve's whole usage, a bad number (--samples abc, --shard x, --gzip-level 12:
#   exit 1), a missing value read as the next option (--samples --compile-only), kcurate stats
#   --db ("unknown option") all were other; --opt=value and -o work in every tool;
# - file errors name the file and say what it is: a text file as a database, a config file that
#   is not there ("(line -1)"), verify-db on an empty file (24 "table missing" lines), a read-only
#   database ("attempt to write a readonly database");
# - tools/kc_reward.py and tools/slurm/kc_slurm.sh: one-line errors with exit codes, never a
#   traceback or a raw "cd: can't cd"; --help on stdout;
# - no GPU: kverify dump exits 4 (not the verdict code 3) after checking its options; kcollect
#   without --compile-only says so before it starts the bundled server or a database;
# - the bundled LLM server runs in a session of its own: a Ctrl-C to the terminal's process group
#   reaches kcollect alone (no retry errors after the interrupt, exit 130), and a kcollect that
#   ignores SIGINT (a script's background job) runs on to the end;
# - kverify serve: a 422 names the problem id only, never the server's paths; --token-file makes
#   every request carry "Authorization: Bearer TOKEN" (401 without), kc_reward.py sends it from
#   KC_REWARD_TOKEN; --host 0.0.0.0 without a token is warned about.
set -u
. "$(dirname "$0")/lib.sh"
cd "$T"
kv="$KC_BIN/kverify"
NO_DRIVER=libkc-no-such-driver.so.1

# run NAME COMMAND...: stdout in NAME.out, stderr in NAME.err, the status in RC
run() { name=$1; shift; RC=0; "$@" >"$T/$name.out" 2>"$T/$name.err" || RC=$?; }
# usage_err NAME STATUS PATTERN COMMAND...: exactly one line on stderr matching PATTERN, exit STATUS
usage_err() {
    name=$1 want=$2 pat=$3; shift 3
    run "$name" "$@"
    [ "$RC" -eq "$want" ] || fail "$name: exit $RC, not $want: $(cat "$T/$name.err")"
    [ "$(wc -l <"$T/$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$T/$name.err")"
    grep -Eq -- "$pat" "$T/$name.err" || fail "$name: '$(cat "$T/$name.err")' does not match '$pat'"
}
# help_ok NAME FIRST-LINE COMMAND...: exit 0, stdout starting with FIRST-LINE, nothing on stderr
help_ok() {
    name=$1 first=$2; shift 2
    run "$name" "$@"
    [ "$RC" -eq 0 ] || fail "$name: exit $RC: $(cat "$T/$name.err")"
    [ ! -s "$T/$name.err" ] || fail "$name: stderr: $(cat "$T/$name.err")"
    head -1 "$T/$name.out" | grep -q "^$first" || fail "$name: $(head -2 "$T/$name.out")"
}

# ---- 7. each command's own usage ----
for sub in check compile problems dump import run reverify racecheck serve gpus; do
    help_ok "kverify-$sub" "usage: kverify $sub" "$kv" "$sub" --help
done
help_ok kverify-serve-h "usage: kverify serve" "$kv" serve --port 1 -h
for sub in run merge verify-db stats runs flips report; do
    help_ok "kcurate-$sub" "usage: kcurate $sub" "$KC_BIN/kcurate" "$sub" --help
done
help_ok kcollect "usage: kcollect" "$KC_BIN/kcollect" --problems x --help
help_ok kexport "usage: kexport" "$KC_BIN/kexport" --db x --help

# ---- 8. usage errors: one line, the option, the command's help, the usage status ----
usage_err serve-wat 4 "^kverify serve: error: unknown option '--wat'; see 'kverify serve --help'$" \
    "$kv" serve --port 1 --wat
usage_err serve-port 4 "^kverify serve: error: --port takes a whole number from 0 to 65535, not 'x'; see" \
    "$kv" serve --port x
usage_err serve-noport 4 "^kverify serve: error: --port P is required" "$kv" serve --compile-only
usage_err check-extra 4 "^kverify check: error: expected one candidate file; see 'kverify check --help'$" \
    "$kv" check --problem level1/019_relu
usage_err run-limit 4 "^kverify run: error: --limit takes a whole number .*, not 'lots'; see" \
    "$kv" run --db x.db --limit lots
usage_err run-shard 4 "^kverify run: error: --shard: 'x' is not a shard" "$kv" run --db x.db --shard x
usage_err samples 2 "^kcollect: error: --samples takes a whole number from 1 to 100000, not 'abc'; see 'kcollect --help'$" \
    "$KC_BIN/kcollect" --problems level1/019_relu --samples abc
usage_err shard 2 "^kcollect: error: --shard: 'x' is not a shard.*; see 'kcollect --help'$" \
    "$KC_BIN/kcollect" --problems level1/019_relu --shard x
usage_err next-option 2 "^kcollect: error: --samples needs a value, not the option '--compile-only'; see" \
    "$KC_BIN/kcollect" --problems level1/019_relu --samples --compile-only
usage_err flag-value 2 "^kcollect: error: --compile-only takes no value" \
    "$KC_BIN/kcollect" --problems level1/019_relu --compile-only=yes
usage_err gzip 2 "^kexport: error: --gzip-level takes a whole number from 1 to 9, not '12'; see 'kexport --help'$" \
    "$KC_BIN/kexport" --db x.db --out e --gzip-level 12
usage_err stats-db 2 "^kcurate stats: error: --db needs a value; see 'kcurate stats --help'$" \
    "$KC_BIN/kcurate" stats --db
usage_err gamma 2 "^kcurate run: error: --gamma takes a number from 0 to 1, not '2'; see 'kcurate run --help'$" \
    "$KC_BIN/kcurate" run --db x.db --gamma 2
usage_err merge-none 2 "^kcurate merge: error: .*; see 'kcurate merge --help'$" "$KC_BIN/kcurate" merge -o m.db

# --opt=value and -o in every tool
"$KC_BIN/kcollect" --problems=level1/019_relu --compile-only --turns=1 --db="$T/kc.db" >c.out 2>c.err ||
    fail "kcollect --db=FILE: $(cat c.err)"
"$KC_BIN/kcurate" run --db="$T/kc.db" >/dev/null 2>e || fail "kcurate run --db=FILE: $(cat e)"
"$KC_BIN/kcurate" stats --db="$T/kc.db" --json >/dev/null 2>e || fail "kcurate stats --db=FILE: $(cat e)"
"$KC_BIN/kcurate" report --db "$T/kc.db" -o "$T/rep" >/dev/null 2>e || fail "kcurate report -o: $(cat e)"
[ -f "$T/rep/index.html" ] || fail "kcurate report -o wrote no report"
"$KC_BIN/kcurate" merge "$T/kc.db" --out="$T/m.db" >/dev/null 2>e || fail "kcurate merge --out=FILE: $(cat e)"
"$KC_BIN/kexport" --db="$T/kc.db" --out="$T/ex" --verdict=compiled >/dev/null 2>e || fail "kexport --db=FILE: $(cat e)"
[ -f "$T/ex/manifest.json" ] || fail "kexport --out=DIR wrote no manifest"
"$kv" problems --show-reference=level1/019_relu >"$T/relu.cu" 2>e || fail "kverify --opt=value: $(cat e)"
"$kv" compile --problem=level1/019_relu "$T/relu.cu" >/dev/null 2>e || fail "kverify compile --problem=ID: $(cat e)"

# ---- 9. files: named, and what they are ----
echo "some notes, not a database" >text.db
for tool in "kcurate stats" "kexport --out e2" "kverify run" "kcollect --problems level1/019_relu --compile-only"; do
    run text $KC_BIN/$tool --db text.db
    [ "$RC" -eq 1 ] || [ "$RC" -eq 4 ] || fail "$tool on a text file: exit $RC"
    grep -q "'text.db' is not a kcorpus database (SQLite: file is not a database)" text.err ||
        fail "$tool on a text file: $(cat text.err)"
done
run config "$KC_BIN/kcollect" --problems level1/019_relu --config /nonexistent.json
[ "$RC" -eq 1 ] && grep -q "cannot read the config file /nonexistent.json: No such file or directory" config.err ||
    fail "a config file that is not there: $RC $(cat config.err)"
! grep -q "line -1" config.err || fail "(line -1): $(cat config.err)"
echo '{"samples": 2,' >bad.json
run badjson "$KC_BIN/kcollect" --problems level1/019_relu --config bad.json
grep -q "bad.json: not a JSON config file: .*line 2" badjson.err || fail "a broken config file: $(cat badjson.err)"
: >empty.db
run empty "$KC_BIN/kcurate" verify-db --db empty.db
[ "$RC" -eq 1 ] || fail "verify-db of an empty file: exit $RC"
grep -q "empty: no tables, not a kcorpus database" empty.out || fail "verify-db of an empty file: $(cat empty.out)"
! grep -q "missing" empty.out || fail "verify-db lists missing tables of an empty file: $(cat empty.out)"
# read-only: a writing command says so, by name (root writes anything: run as nobody)
mkdir ro && cp "$T/kc.db" ro/ && chmod 444 ro/kc.db && chmod 555 ro && chmod 755 "$T"
as_reader() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
for tool in "kverify run" "kverify reverify" "kcurate run" "kcollect --problems level1/019_relu --compile-only"; do
    RC=0
    as_reader env KC_PROBLEMS="$KC_PROBLEMS" $KC_BIN/$tool --db "$T/ro/kc.db" >ro.out 2>ro.err || RC=$?
    [ "$RC" -ne 0 ] || fail "$tool wrote a read-only database"
    grep -q "'$T/ro/kc.db' is read-only" ro.err || fail "$tool on a read-only database: $(cat ro.err)"
    ! grep -q "attempt to write a readonly database" ro.err || fail "$tool: SQLite's words: $(cat ro.err)"
done
chmod 755 ro

# ---- 10. the scripts: one line, an exit status, --help on stdout ----
rw="$KC_ROOT/tools/kc_reward.py"
help_ok reward-help "usage: kc_reward.py" python3 "$rw" --help
usage_err reward-none 2 "^kc_reward: error: --problem ID is required; see 'kc_reward.py --help'$" python3 "$rw"
usage_err reward-wat 2 "^kc_reward: error: unknown option '--wat'; see" python3 "$rw" --problem x --wat f
usage_err reward-file 1 "^kc_reward: error: cannot read nofile: No such file or directory$" \
    python3 "$rw" --problem level1/019_relu nofile
usage_err reward-down 1 "^kc_reward: error: cannot reach kverify serve at http://127.0.0.1:9/v1" \
    env KC_REWARD_URL=http://127.0.0.1:9/v1 python3 "$rw" --problem level1/019_relu "$T/relu.cu"
usage_err reward-env 1 "^kc_reward: error: KC_REWARD_TIMEOUT must be a number" \
    env KC_REWARD_TIMEOUT=soon python3 "$rw" --problem level1/019_relu "$T/relu.cu"
ks="$KC_ROOT/tools/slurm/kc_slurm.sh"
help_ok slurm-help "kc_slurm.sh: runs a kcollect collection" sh "$ks" --help
help_ok slurm-sub-help "kc_slurm.sh: runs a kcollect collection" sh "$ks" status --help
usage_err slurm-none 2 "^kc_slurm: error: no command .*; see 'kc_slurm.sh --help'$" sh "$ks"
usage_err slurm-nodir 1 "^kc_slurm: error: no directory /nonexistent" sh "$ks" status --dir /nonexistent
usage_err slurm-novalue 2 "^kc_slurm: error: --dir needs a value; see" sh "$ks" submit --shards 2 --dir
usage_err slurm-shards 2 "^kc_slurm: error: --shards takes a whole number, not 'two'; see" \
    sh "$ks" submit --dir d --shards two
usage_err slurm-plan 1 "^kc_slurm: error: .* has no plan.env: not a kc_slurm directory" sh "$ks" resubmit --dir=.
for f in reward-none reward-file reward-down reward-env slurm-nodir slurm-none; do
    ! grep -q "Traceback\|can't cd\|can't open\|parameter not set" "$T/$f.err" || fail "$f: $(cat "$T/$f.err")"
done

# ---- 11. no GPU ----
usage_err dump-wat 4 "^kverify dump: error: unknown option '--wat'; see 'kverify dump --help'$" \
    env KC_LIBCUDA=$NO_DRIVER "$kv" dump --wat
usage_err dump-nogpu 4 "no NVIDIA driver found" \
    env KC_LIBCUDA=$NO_DRIVER "$kv" dump --problem level1/019_relu --seed 1 --out "$T/dump"
usage_err gpus-nogpu 3 "no NVIDIA driver found" env KC_LIBCUDA=$NO_DRIVER "$kv" gpus
run collect-nogpu env KC_LIBCUDA=$NO_DRIVER "$KC_BIN/kcollect" --problems level1/019_relu --db "$T/nogpu.db"
[ "$RC" -eq 1 ] || fail "kcollect without a GPU: exit $RC"
grep -q "no NVIDIA driver found.*use --compile-only" collect-nogpu.err || fail "kcollect without a GPU: $(cat collect-nogpu.err)"
! grep -q "bundled test LLM server" collect-nogpu.err || fail "kcollect started the bundled server first"
[ ! -e "$T/nogpu.db" ] || fail "kcollect without a GPU made a database"

# ---- 12. the bundled server in its own session ----
# wait_turns DB: until kcollect recorded 3 turns in DB
wait_turns() {
    i=0
    until [ "$(sqlite3 "$1" "SELECT count(*) FROM turns" 2>/dev/null || echo 0)" -gt 2 ]; do
        i=$((i + 1)); [ $i -lt 300 ] || fail "kcollect recorded no turn: $(cat "$1.err")"; sleep 0.1
    done
}
# A terminal's Ctrl-C goes to its foreground process group: kcollect (and, before, its server).
# (A new session with SIGINT's default action, as a terminal's foreground job has it: a script's
# background job starts with SIGINT ignored.)
python3 -c 'import os, signal, sys
os.setsid()
signal.signal(signal.SIGINT, signal.SIG_DFL)
open(sys.argv[1] + ".pgid", "w").write(str(os.getpid()))
os.execv(sys.argv[2], sys.argv[2:])' "$T/int.db" "$KC_BIN/kcollect" --problems "level1/0*" \
    --compile-only --concurrency 4 --turns 1 --fake-args "--delay-ms 400" --db "$T/int.db" \
    >"$T/int.db.out" 2>"$T/int.db.err" &
kpid=$!
wait_turns "$T/int.db"
env kill -s INT -- "-$(cat "$T/int.db.pgid")"
irc=0
wait $kpid || irc=$?
[ $irc -eq 130 ] && grep -q "interrupted: run the same command again to resume" "$T/int.db.out" ||
    fail "kcollect did not stop as interrupted (exit $irc): $(tail -n 3 "$T/int.db.out" "$T/int.db.err")"
! grep -Eiq "retry|retrying|run-fatal|connection refused" "$T/int.db.err" "$T/int.db.out" ||
    fail "the bundled server died with kcollect's Ctrl-C: $(grep -Ei "retry|run-fatal|refused" "$T/int.db.err" "$T/int.db.out")"
# A script's background job ignores SIGINT: a SIGINT to the script's group must not take the server.
setsid sh -c 'echo $$ >"$1.pgid"; "$0" --problems "level1/0[0-2]*" --compile-only --concurrency 4 \
    --turns 1 --fake-args "--delay-ms 300" --db "$1" >"$1.out" 2>"$1.err" & wait $!; echo $? >"$1.rc"' \
    "$KC_BIN/kcollect" "$T/bg.db" &
wait_turns "$T/bg.db"
env kill -s INT -- "-$(cat "$T/bg.db.pgid")" 2>/dev/null
i=0
while [ ! -s "$T/bg.db.rc" ]; do i=$((i + 1)); [ $i -lt 600 ] || fail "the background kcollect did not end"; sleep 0.1; done
[ "$(cat "$T/bg.db.rc")" = 0 ] ||
    fail "a background kcollect (SIGINT ignored) did not finish: exit $(cat "$T/bg.db.rc"): $(tail -n 3 "$T/bg.db.out" "$T/bg.db.err")"

# ---- 16. kverify serve: 422 without paths, the token ----
start_serve() { # NAME ARGS...: kverify serve --compile-only on a free port; SPID, SURL
    n=$1; shift
    "$kv" serve --port 0 --compile-only "$@" >"$T/$n.out" 2>"$T/$n.err" &
    SPID=$!
    i=0
    until grep -q "listening on" "$T/$n.out" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 300 ] || fail "serve did not start: $(cat "$T/$n.err")"; sleep 0.1
    done
    SURL="http://127.0.0.1:$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$T/$n.out")"
}
start_serve s1
curl -s -d '{"problem_id": "level1/no_such", "completion": "x"}' "$SURL/v1/verify" >s422.json
grep -q "no problem 'level1/no_such'" s422.json || fail "422: $(cat s422.json)"
! grep -q "$KC_PROBLEMS\|\.json" s422.json || fail "a 422 names the server's files: $(cat s422.json)"
kill $SPID; wait $SPID 2>/dev/null
openssl rand -hex 24 >token && chmod 600 token
start_serve s2 --token-file "$T/token"
code=$(curl -s -o none.json -w '%{http_code}' -d '{"problem_id": "level1/019_relu", "completion": "x"}' "$SURL/v1/verify")
[ "$code" = 401 ] || fail "no token: HTTP $code"
code=$(curl -s -o bad.json -w '%{http_code}' -H "Authorization: Bearer wrong" "$SURL/health")
[ "$code" = 401 ] || fail "a wrong token: HTTP $code"
code=$(curl -s -o ok.json -w '%{http_code}' -H "Authorization: Bearer $(cat token)" "$SURL/health")
[ "$code" = 200 ] || fail "the token: HTTP $code"
run reward-401 env KC_REWARD_URL="$SURL" python3 "$rw" --problem level1/019_relu "$T/relu.cu"
[ "$RC" -eq 1 ] && grep -q "answered 401" reward-401.err || fail "kc_reward.py without a token: $RC $(cat reward-401.err)"
run reward-tok env KC_REWARD_URL="$SURL" KC_REWARD_TOKEN="$(cat token)" python3 "$rw" --problem level1/019_relu "$T/relu.cu"
[ "$RC" -eq 0 ] && grep -q "relu.cu: compiled" reward-tok.out || fail "kc_reward.py with KC_REWARD_TOKEN: $(cat reward-tok.err)"
kill $SPID; wait $SPID 2>/dev/null
echo short >short.token
usage_err serve-token 4 "token must be one line of at least 16 characters" "$kv" serve --port 0 --compile-only --token-file short.token
start_serve s3 --host 0.0.0.0
grep -q "warning: --host 0.0.0.0 takes requests from other machines.*--token-file" "$T/s3.err" ||
    fail "no warning for --host 0.0.0.0 without a token: $(cat "$T/s3.err")"
kill $SPID; wait $SPID 2>/dev/null
echo ok

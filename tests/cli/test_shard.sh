#!/bin/sh
# test_shard: --shard I/N without Slurm. kcollect: 3 shards of a compile-only collection hold
# disjoint trajectories whose union, merged, is the unsharded run's (same trajectories and
# verdicts); a shard's database refuses another split, an unsharded command, and a shard into an
# unsharded database. kverify run: 3 shards over one database verify every pending candidate
# exactly once and refuse a different N while candidates are pending; reverify keeps its count.
set -eu
. "$(dirname "$0")/lib.sh"
ARGS="--problems level1/01*,level1/02* --samples 2 --turns 1 --compile-only --concurrency 2"
kc() { "$KC_BIN/kcollect" $ARGS "$@" >>"$T/log" 2>&1; }
KEY="SELECT tr.problem_id, tr.sample_index, tr.stop_reason, v.verdict FROM trajectories tr
     JOIN turns t ON t.trajectory_id = tr.id JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
     ORDER BY 1, 2, t.turn_index"

kc --db "$T/one.db" || fail "unsharded kcollect: $(tail -3 "$T/log")"
for i in 0 1 2; do kc --shard $i/3 --db "$T/s$i.db" || fail "kcollect --shard $i/3: $(tail -3 "$T/log")"; done
total=0
for i in 0 1 2; do
    n=$(sqlite3 "$T/s$i.db" "SELECT count(*) FROM trajectories")
    [ "$n" -gt 0 ] && [ "$n" -lt 40 ] || fail "shard $i holds $n of 40 trajectories"
    total=$((total + n))
done
[ $total -eq 40 ] || fail "the shards hold $total trajectories, not 40"
"$KC_BIN/kcurate" merge "$T/s0.db" "$T/s1.db" "$T/s2.db" -o "$T/m.db" >/dev/null
[ "$(sqlite3 "$T/one.db" "$KEY")" = "$(sqlite3 "$T/m.db" "$KEY")" ] || fail "merged shards differ from the unsharded run"
[ "$(sqlite3 "$T/m.db" "SELECT count(*) FROM runs")" -eq 1 ] || fail "the shards are not one run"

# resuming: the same shard again adds nothing; other splits are refused and change nothing
kc --shard 1/3 --db "$T/s1.db" || fail "re-running shard 1/3: $(tail -3 "$T/log")"
before=$(sqlite3 "$T/s1.db" "SELECT count(*) FROM trajectories")
kc --shard 1/4 --db "$T/s1.db" && fail "a 1/3 database took --shard 1/4"
grep -q "holds shard 1/3 of a sharded collection, not 1/4" "$T/log" || fail "no reason for 1/4: $(tail -2 "$T/log")"
kc --shard 2/3 --db "$T/s1.db" && fail "a 1/3 database took --shard 2/3"
kc --db "$T/s1.db" && fail "a shard's database took an unsharded run"
kc --shard 0/3 --db "$T/one.db" && fail "an unsharded database took a shard"
grep -q "holds an unsharded collection" "$T/log" || fail "no reason for a shard into an unsharded database"
[ "$(sqlite3 "$T/s1.db" "SELECT count(*) FROM trajectories")" = "$before" ] || fail "a refused shard changed the database"
for bad in 3/3 1/0 x/2 1 -1/2; do
    "$KC_BIN/kcollect" $ARGS --shard "$bad" --db "$T/bad.db" >>"$T/log" 2>&1 && fail "--shard $bad accepted"
done
[ -e "$T/bad.db" ] && fail "a refused --shard created a database"

# kverify run: shards share one database
cp "$T/one.db" "$T/v.db"
sqlite3 "$T/v.db" "UPDATE candidates SET status = 'pending'"
V="$KC_BIN/kverify"
"$V" run --db "$T/v.db" --compile-only --shard 0/3 --limit 3 >>"$T/log" 2>&1 || fail "kverify run --shard 0/3"
"$V" run --db "$T/v.db" --compile-only --shard 1/2 >>"$T/log" 2>&1 && fail "kverify took 1/2 while a 3-way split is pending"
grep -q "pending under a split into 3 shards" "$T/log" || fail "no reason for the refused kverify shard"
"$V" run --db "$T/v.db" --compile-only >>"$T/log" 2>&1 && fail "an unsharded kverify run joined a 3-way split"
for i in 0 1 2; do "$V" run --db "$T/v.db" --compile-only --shard $i/3 >>"$T/log" 2>&1 || fail "kverify --shard $i/3"; done
[ "$(sqlite3 "$T/v.db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" -eq 0 ] || fail "candidates left pending"
[ "$(sqlite3 "$T/v.db" "SELECT count(*) FROM (SELECT candidate_id FROM verifications GROUP BY candidate_id HAVING count(*) <> 2)")" -eq 0 ] ||
    fail "a candidate was verified more or less than once by the shards"
# reverify: a pass keeps the count it started with
"$V" reverify --db "$T/v.db" --compile-only --shard 0/2 --limit 1 >>"$T/log" 2>&1 || fail "reverify --shard 0/2"
"$V" reverify --db "$T/v.db" --compile-only --shard 0/3 >>"$T/log" 2>&1 && fail "reverify pass of 2 shards resumed as 0/3"
"$V" reverify --db "$T/v.db" --compile-only --shard 0/2 >>"$T/log" 2>&1 || fail "reverify --shard 0/2 resume"
"$V" reverify --db "$T/v.db" --compile-only --shard 1/2 >"$T/rv.out" 2>>"$T/log" || fail "reverify --shard 1/2"
grep -q "40 of 40 candidates re-verified (pass finished)" "$T/rv.out" || fail "reverify shards: $(cat "$T/rv.out")"
[ "$(sqlite3 "$T/v.db" "SELECT count(*) FROM verifications WHERE reverify_pass = 1")" -eq 40 ] || fail "reverify shards overlapped"

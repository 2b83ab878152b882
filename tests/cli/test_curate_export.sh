#!/bin/sh
# test_curate_export: kc_synth -> kcurate -> kexport on a synthetic database with planted
# duplicates. Checks: dedup finds exactly the planted exact and near clusters; every problem has
# one split and held-out problems never reach train; merge is idempotent; re-export is byte
# identical; shard sha256 matches the manifest; the tar lists every file; a missing blob gives a
# clear error and leaves no shard behind.
set -eu
BIN="${KC_BIN:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
clean() { ! grep -q 'Sanitizer' "$1" || fail "sanitizer report on a failing run: $(cat "$1")"; }

"$BIN/kc_synth" --db "$T/a.db" --candidates 1500 --problems 12 --seed 7 --truth "$T/truth" \
    --exact-rate 0.08 --near-rate 0.08
"$BIN/kcurate" run --db "$T/a.db" --heldout 'level2/003_synth_op,level1/00[0-1]*' >/dev/null

# dedup: the partition by representative equals the planted partition (exact and near)
sqlite3 -separator ' ' "$T/a.db" "SELECT candidate_id, exact_rep_id, near_rep_id FROM candidate_labels
    WHERE exact_rep_id IS NOT NULL ORDER BY candidate_id" >"$T/labels"
partition() { # file column -> one line per cluster: its member ids in order (no process per cluster)
    awk -v c="$2" '{ print $c, $1 }' "$1" | sort -k1,1n -k2,2n |
        awk '$1 != k { if (NR > 1) print m; k = $1; m = $2; next } { m = m " " $2 } END { if (NR) print m }' |
        sort
}
[ "$(wc -l <"$T/labels")" -eq "$(wc -l <"$T/truth")" ] || fail "labelled and planted counts differ"
partition "$T/labels" 2 >"$T/p1"; partition "$T/truth" 2 >"$T/p2"
cmp -s "$T/p1" "$T/p2" || fail "exact-duplicate clusters differ from the planted ones"
partition "$T/labels" 3 >"$T/p1"; partition "$T/truth" 3 >"$T/p2"
cmp -s "$T/p1" "$T/p2" || fail "near-duplicate clusters differ from the planted ones"
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM candidate_labels WHERE near_rep_id <> candidate_id")" -gt 50 ] ||
    fail "too few duplicates planted to mean anything"

# splits: one per problem, held-out problems are 'heldout', trajectories follow their problem
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM problem_labels WHERE heldout AND split <> 'heldout'")" -eq 0 ] ||
    fail "a held-out problem has a split other than heldout"
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM problem_labels WHERE heldout")" -eq 2 ] || fail "held-out list not applied"
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM trajectory_labels tl JOIN trajectories t ON t.id = tl.trajectory_id
    JOIN problem_labels p ON p.problem_id = t.problem_id WHERE p.split <> tl.split")" -eq 0 ] ||
    fail "a trajectory's split differs from its problem's"

# export: no held-out problem in train; one split per problem across shards
"$BIN/kexport" --db "$T/a.db" --out "$T/e1" --format sft --every-turn --split train,valid,test,heldout --tar >/dev/null
"$BIN/kexport" --db "$T/a.db" --out "$T/e2" --format sft --every-turn --split train,valid,test,heldout --tar >/dev/null
for f in "$T"/e1/*.jsonl.gz; do
    zcat "$f" | sed 's/.*"problem":{"id":"\([^"]*\)".*/\1/' | sort -u | sed "s|^|$(basename "$f" | cut -d- -f1) |"
done | sort -u >"$T/split_of"
[ "$(cut -d' ' -f2 "$T/split_of" | sort | uniq -d | wc -l)" -eq 0 ] || fail "a problem appears in two splits"
grep -q '^train level2/003_synth_op$' "$T/split_of" && fail "held-out problem in train"
grep -q '^heldout level2/003_synth_op$' "$T/split_of" || fail "held-out problem not exported as heldout"

# byte-identical re-export, manifest sha256, tar listing
for f in $(cd "$T/e1" && ls); do cmp -s "$T/e1/$f" "$T/e2/$f" || fail "re-export of $f differs"; done
sed -n 's/.*"name": "\(.*-of-.*\)",/\1/p' "$T/e1/manifest.json" >"$T/names"
[ -s "$T/names" ] || fail "manifest lists no shard"
for n in $(cat "$T/names"); do
    want=$(grep -A6 "\"name\": \"$n\"" "$T/e1/manifest.json" | sed -n 's/.*"sha256": "\(.*\)".*/\1/p')
    got=$(sha256sum "$T/e1/$n" | cut -d' ' -f1)
    [ "$want" = "$got" ] || fail "sha256 of $n does not match the manifest"
done
tar tf "$T/e1.tar" | sort >"$T/listed"
ls "$T/e1" | sort >"$T/present"
cmp -s "$T/listed" "$T/present" || fail "the tar does not list every file"
cmp -s "$T/e1.tar" "$T/e2.tar" || fail "the tar is not reproducible"

# every format exports and reparses as JSON lines
for fmt in multiturn rl preference; do
    "$BIN/kexport" --db "$T/a.db" --out "$T/$fmt" --format $fmt >/dev/null
    n=$(zcat "$T/$fmt"/*.jsonl.gz | wc -l)
    [ "$n" -gt 0 ] || fail "$fmt exported nothing"
done

# merge: idempotent, does not duplicate problems, blobs or runs
"$BIN/kc_synth" --db "$T/b.db" --candidates 400 --problems 6 --seed 8 --run-tag other
"$BIN/kcurate" merge "$T/a.db" "$T/b.db" -o "$T/all.db" >/dev/null
counts() { sqlite3 "$1" "SELECT (SELECT count(*) FROM problems), (SELECT count(*) FROM blobs),
    (SELECT count(*) FROM runs), (SELECT count(*) FROM candidates), (SELECT count(*) FROM turns),
    (SELECT count(*) FROM verifications), (SELECT count(*) FROM timings)"; }
c1=$(counts "$T/all.db")
"$BIN/kcurate" merge "$T/a.db" "$T/b.db" -o "$T/all.db" >/dev/null
"$BIN/kcurate" merge "$T/all.db" -o "$T/all2.db" >/dev/null
"$BIN/kcurate" merge "$T/a.db" -o "$T/all2.db" >/dev/null
[ "$c1" = "$(counts "$T/all.db")" ] || fail "merging again changed the database: $c1 -> $(counts "$T/all.db")"
[ "$c1" = "$(counts "$T/all2.db")" ] || fail "merging a merged copy duplicated rows"
[ "$(echo "$c1" | cut -d'|' -f1)" -eq 12 ] || fail "problems duplicated by merge: $c1"
[ "$(echo "$c1" | cut -d'|' -f4)" -eq 1900 ] || fail "candidates lost or duplicated by merge: $c1"
"$BIN/kcurate" run --db "$T/all.db" >/dev/null
"$BIN/kcurate" stats --db "$T/all.db" >"$T/stats.out" || fail "stats"
grep -q "exact duplicates" "$T/stats.out" || fail "stats: $(cat "$T/stats.out")"
# the compile-only line only where a candidate stopped at compilation (a GPU run printed
# "solved, compile-only 10 of 0"), and then counted over all trajectories
[ "$(sqlite3 "$T/all.db" "SELECT count(*) FROM verifications WHERE verdict = 'compiled'")" = 0 ] ||
    fail "kc_synth now writes compiled verdicts: this check needs a database without them"
! grep -q "compile-only" "$T/stats.out" || fail "compile-only line without compiled verdicts: $(cat "$T/stats.out")"
cp "$T/all.db" "$T/co.db"
sqlite3 "$T/co.db" "UPDATE verifications SET verdict = 'compiled' WHERE verdict = 'compile_error'"
"$BIN/kcurate" stats --db "$T/co.db" >"$T/stats.out" || fail "stats (compiled verdicts)"
ntraj=$(sqlite3 "$T/co.db" "SELECT count(*) FROM trajectory_labels")
grep -Eq "solved, compile-only +[0-9]+ of $ntraj " "$T/stats.out" ||
    fail "compile-only line should count $ntraj trajectories: $(cat "$T/stats.out")"

# re-running with other parameters replaces the labels and records them
"$BIN/kcurate" run --db "$T/a.db" --gamma 0.9 --near-threshold 0.9 >/dev/null
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM candidate_labels")" -eq 1500 ] || fail "labels not replaced"
sqlite3 "$T/a.db" "SELECT params_json FROM curate_runs ORDER BY id DESC LIMIT 1" | grep -q '"gamma":0.9' ||
    fail "parameters not recorded"

# corrupted input: a missing blob and a truncated database give a clear error and no shard
sha=$(sqlite3 "$T/a.db" "SELECT source_sha FROM candidates c JOIN candidate_labels l ON l.candidate_id = c.id
    WHERE l.verdict_class = 'correct' AND l.near_rep_id = c.id LIMIT 1")
sqlite3 "$T/a.db" "DELETE FROM blobs WHERE sha256 = '$sha'"
if "$BIN/kexport" --db "$T/a.db" --out "$T/bad" --every-turn 2>"$T/err"; then fail "export of a database with a missing blob succeeded"; fi
grep -q "missing blob $sha" "$T/err" || fail "unclear error: $(cat "$T/err")"
clean "$T/err"
[ -z "$(ls -A "$T/bad" 2>/dev/null)" ] || fail "a failed export left files: $(ls -A "$T/bad")"
if "$BIN/kcurate" run --db "$T/a.db" 2>"$T/err"; then fail "curate of a database with a missing blob succeeded"; fi
grep -q "missing blob" "$T/err" || fail "unclear curate error"
clean "$T/err"
head -c 65536 "$T/b.db" >"$T/trunc.db"
if "$BIN/kexport" --db "$T/trunc.db" --out "$T/bad2" 2>"$T/err"; then fail "export of a truncated database succeeded"; fi
grep -q "kexport: error:" "$T/err" || fail "unclear error for a truncated database"
clean "$T/err"
[ -z "$(ls -A "$T/bad2" 2>/dev/null)" ] || fail "a failed export left files"
echo ok

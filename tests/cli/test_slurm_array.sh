#!/bin/sh
# test_slurm_array: the documented Slurm path (tools/slurm/kc_slurm.sh) on a real one-node
# Slurm cluster on the loopback: its own munged (a fresh key) and slurmctld/slurmd (own
# slurm.conf, free ports, state in the scratch directory), whose node declares 4 GPUs as a
# generic resource (gres/gpu, placeholder devices: nothing opens them). A 4-task array of a
# compile-only collection with the bundled fake LLM, one GPU per task (--gpus-per-task 1): each
# task's kcollect starts with the GPU Slurm assigned it (CUDA_VISIBLE_DEVICES = SLURM_JOB_GPUS,
# one of 0-3); one task is cancelled mid-run (scancel: no completion
# marker), status names it, resubmit runs only it, merge + curate; the merged database must hold
# exactly the trajectories, turns and labels of an unsharded run of the same command (none
# twice). Also: an array submitted by hand with the wrong task count refuses to run, and a
# shard refuses a database of another split; a submit that sbatch refuses (5 GPUs per task on a
# node of 4) shows sbatch's reason and leaves nothing behind, so the same directory
# takes a fresh submit; 6 shards on a cluster whose arrays hold 4 (MaxArraySize) go out in
# two windows (the second after the first under --max-running), merge to the same run, and
# resubmit windows the same way; a task with a two-minute time limit is warned
# (--signal=B:USR1@S), stops kcollect cleanly (exit 130, no marker) before the limit, and
# resubmit resumes its database.
# Every daemon it started is stopped at exit.
# SKIP (exit 0, with the reason) when Slurm or munge is not installed or cannot start here.
set -eu
. "$(dirname "$0")/lib.sh"

skip() { echo "SKIP: test_slurm_array: $*"; exit 0; }
. "$(dirname "$0")/slurm_cluster.sh"
SLURM_MAX_ARRAY=4 # an array holds shards 0-3 at most: 6 shards need two windows
start_cluster

# ---- the collection: a compile-only run on the bundled fake LLM, 2 samples a problem ----
KCS="$KC_ROOT/tools/slurm/kc_slurm.sh"
# The tasks run kcollect from $T/bin: the tools themselves, and a kcollect that notes the GPUs
# in its environment (task, CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS; a file per task and job), then
# becomes the real one.
REAL_BIN=$KC_BIN
mkdir -p "$T/bin" "$T/gpu-env"
for t in kverify kverify-gpu kcurate fake_llm; do ln -s "$REAL_BIN/$t" "$T/bin/$t"; done
cat >"$T/bin/kcollect" <<EOF
#!/bin/sh
echo "\${SLURM_ARRAY_TASK_ID:-none} \${CUDA_VISIBLE_DEVICES:-unset} \${SLURM_JOB_GPUS:-unset}" \\
    >"$T/gpu-env/\${SLURM_ARRAY_TASK_ID:-none}-\${SLURM_ARRAY_JOB_ID:-none}"
exec "$REAL_BIN/kcollect" "\$@"
EOF
chmod +x "$T/bin/kcollect"
KC_BIN=$T/bin
export KC_BIN KC_PROBLEMS
D="$C/shared/run"
ARGS="--problems level1/01*,level1/02* --samples 2 --turns 2 --compile-only --concurrency 2"
echo '{"endpoint": "bundled", "bundled_args": "--bug compile --delay-ms 150"}' >"$T/kc.json"
N=4

sh "$KCS" submit --dir "$D" --shards $N --gpus-per-task 1 --config "$T/kc.json" -- $ARGS >"$T/submit.out" ||
    fail "submit: $(cat "$T/submit.out")"
grep -q "shards 0-3 of 4" "$T/submit.out" || fail "submit did not report the array: $(cat "$T/submit.out")"
grep -q -- '--array=0-3\|0-3' "$T/submit.out"
[ -x "$D/job.sh" ] && [ -f "$D/plan.env" ] || fail "submit wrote no job script or plan"

# cancel task 2 once it has recorded a turn (mid-run)
job=$(head -1 "$D/jobs")
i=0
until [ -f "$D/shard-2.db" ] && [ "$(sqlite3 "$D/shard-2.db" 'SELECT count(*) FROM turns' 2>/dev/null || echo 0)" -gt 0 ]; do
    i=$((i + 1)); [ $i -lt 600 ] || fail "shard 2 never recorded a turn: $(cat "$D"/logs/shard-2-* 2>/dev/null)"
    sleep 0.1
done
scancel "${job}_2"
wait_idle

[ -f "$D/done/shard-2.ok" ] && fail "the cancelled shard has a completion marker"
for s in 0 1 3; do
    [ -f "$D/done/shard-$s.ok" ] || fail "shard $s has no completion marker: $(cat "$D"/logs/shard-$s-* 2>/dev/null)"
done
open=$(sqlite3 "$D/shard-2.db" "SELECT count(*) FROM trajectories WHERE status <> 'done'")
sh "$KCS" status --dir "$D" >"$T/status.out" && fail "status said complete with shard 2 cancelled"
grep -q "shard 2/4: incomplete" "$T/status.out" || fail "status: $(cat "$T/status.out")"
grep -q "3 of 4 shards complete" "$T/status.out" || fail "status: $(cat "$T/status.out")"
sh "$KCS" merge --dir "$D" >"$T/merge0.out" 2>&1 && fail "merge ran with a shard incomplete"
grep -q "not complete: 2" "$T/merge0.out" || fail "merge: $(cat "$T/merge0.out")"
[ -f "$D/merged.db" ] && fail "a refused merge left a database"

# resubmit: only shard 2, resumed from its database
sh "$KCS" resubmit --dir "$D" >"$T/resubmit.out" || fail "resubmit: $(cat "$T/resubmit.out")"
grep -q "shards 2 of 4" "$T/resubmit.out" || fail "resubmit did not submit shard 2 alone: $(cat "$T/resubmit.out")"
wait_idle
[ -f "$D/done/shard-2.ok" ] || fail "the resubmitted shard did not complete: $(cat "$D"/logs/shard-2-* | tail -20)"
grep -q "continuing run" "$D"/logs/shard-2-"$(tail -1 "$D/jobs")".out ||
    fail "the resubmitted shard did not resume its database (it had $open open trajectories)"
sh "$KCS" status --dir "$D" >"$T/status2.out" || fail "status after resubmit: $(cat "$T/status2.out")"
sh "$KCS" resubmit --dir "$D" | grep -q "nothing to resubmit" || fail "resubmit of a complete array submitted work"

sh "$KCS" merge --dir "$D" >"$T/merge.out" 2>&1 || fail "merge: $(cat "$T/merge.out")"
M="$D/merged.db"

# every task's kcollect (4, and the resubmitted shard 2) started with the GPU Slurm gave its task
[ "$(ls "$T/gpu-env" | wc -l)" -eq 5 ] || fail "kcollect started $(ls "$T/gpu-env" | wc -l) times, not 5"
for f in "$T"/gpu-env/*; do
    read -r task gpus job_gpus <"$f"
    case $gpus in 0|1|2|3) ;; *) fail "task $task's kcollect saw CUDA_VISIBLE_DEVICES=$gpus, not one GPU of 0-3" ;; esac
    [ "$gpus" = "$job_gpus" ] || fail "task $task: CUDA_VISIBLE_DEVICES=$gpus but SLURM_JOB_GPUS=$job_gpus"
    log="$D/logs/shard-$task-${f##*-}.out"
    grep -q "shard $task/4 on .*GPUs: $gpus)" "$log" || fail "task $task's log does not name GPU $gpus: $(head -3 "$log")"
done

# ---- the unsharded run of the same command ----
"$KC_BIN/kcollect" --config "$T/kc.json" $ARGS --db "$T/one.db" >"$T/one.out" 2>&1 ||
    fail "unsharded kcollect: $(tail -5 "$T/one.out")"
"$KC_BIN/kcurate" run --db "$T/one.db" >/dev/null 2>&1 || fail "kcurate run on the unsharded run"

TRAJ="SELECT tr.problem_id, tr.sample_index, tr.status, tr.stop_reason, tl.solved, tl.n_turns,
             tl.split FROM trajectories tr LEFT JOIN trajectory_labels tl ON tl.trajectory_id = tr.id
      ORDER BY 1, 2"
TURNS="SELECT tr.problem_id, tr.sample_index, t.turn_index, c.source_sha, v.verdict, cl.verdict_class,
              cl.reward, cl.normalized_sha FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id
       JOIN candidates c ON c.id = t.candidate_id JOIN v_latest_verification v ON v.candidate_id = c.id
       LEFT JOIN candidate_labels cl ON cl.candidate_id = c.id ORDER BY 1, 2, 3"
sqlite3 "$T/one.db" "$TRAJ" >"$T/one.traj"; sqlite3 "$M" "$TRAJ" >"$T/merged.traj"
sqlite3 "$T/one.db" "$TURNS" >"$T/one.turns"; sqlite3 "$M" "$TURNS" >"$T/merged.turns"
[ "$(wc -l <"$T/one.traj")" -eq 40 ] || fail "the unsharded run has $(wc -l <"$T/one.traj") trajectories, not 40"
[ "$(wc -l <"$T/one.turns")" -gt 40 ] || fail "the collection has no second turns (fake --bug compile)"
diff "$T/one.traj" "$T/merged.traj" >"$T/diff" || fail "trajectories differ from the unsharded run: $(head "$T/diff")"
diff "$T/one.turns" "$T/merged.turns" >"$T/diff" || fail "turns/labels differ from the unsharded run: $(head "$T/diff")"
[ "$(sqlite3 "$M" "SELECT count(*) FROM (SELECT 1 FROM trajectories GROUP BY problem_id, sample_index HAVING count(*) > 1)")" -eq 0 ] ||
    fail "a trajectory is in the merged database twice"
[ "$(sqlite3 "$M" "SELECT count(*) FROM runs")" -eq 1 ] || fail "the shards did not merge into one run"
[ "$(sqlite3 "$M" "SELECT count(*) FROM shard_plans")" -eq 0 ] || fail "the merged database claims to be a shard"
# each shard holds exactly the trajectories the documented split gives it
for s in 0 1 2 3; do
    sqlite3 "$D/shard-$s.db" "SELECT problem_id || '#' || sample_index FROM trajectories" | while read -r k; do
        want=$(python3 -c "import hashlib,sys; print(int(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16], 16) % 4)" "$k")
        [ "$want" = "$s" ] || { echo "$k in shard $s, not $want"; exit 1; }
    done || fail "a trajectory is in the wrong shard"
done

# ---- more shards than one array may hold: windows ----
# 6 shards on a cluster whose MaxArraySize is 4: arrays of shards 0-3 and 4-5 (offset 4), the
# second after the first (--max-running); each task's log under its shard's number; the merge
# equals the unsharded run; resubmit of shards 1 and 5 windows them the same way.
D4="$C/shared/run4"
sh "$KCS" submit --dir "$D4" --shards 6 --max-running 3 --config "$T/kc.json" -- $ARGS >"$T/win.out" 2>&1 ||
    fail "a submit of 6 shards on a cluster of MaxArraySize 4: $(cat "$T/win.out")"
grep -q "shards 0-3 of 6" "$T/win.out" && grep -q "shards 4-5 of 6" "$T/win.out" ||
    fail "not two windows: $(cat "$T/win.out")"
j1=$(sed -n 1p "$D4/jobs"); j2=$(sed -n 2p "$D4/jobs")
[ "$(cat "$D4/job_offsets")" = "$(printf '%s 0\n%s 4' "$j1" "$j2")" ] || fail "job_offsets: $(cat "$D4/job_offsets")"
scontrol show job "$j2" | grep -q "Dependency=afterany:${j1}" ||
    fail "the second window does not wait for the first: $(scontrol show job "$j2" | grep -i depend)"
wait_idle
for s in 0 1 2 3 4 5; do
    [ -f "$D4/done/shard-$s.ok" ] || fail "window shard $s has no completion marker: $(cat "$D4"/logs/* 2>/dev/null | tail -20)"
    grep -q "shard $s/6 on " "$D4"/logs/shard-$s-*.out || fail "no log of shard $s under its number: $(ls "$D4/logs")"
done
[ -z "$(ls "$D4"/logs/slurm-* 2>/dev/null)" ] || fail "sbatch's empty output files were left: $(ls "$D4/logs")"
sh "$KCS" merge --dir "$D4" >"$T/merge4.out" 2>&1 || fail "merge of the windows: $(cat "$T/merge4.out")"
sqlite3 "$D4/merged.db" "$TRAJ" >"$T/merged4.traj"
diff "$T/one.traj" "$T/merged4.traj" >"$T/diff" || fail "6 windowed shards differ from the unsharded run: $(head "$T/diff")"
rm "$D4/done/shard-1.ok" "$D4/done/shard-5.ok"
sh "$KCS" resubmit --dir "$D4" >"$T/win2.out" 2>&1 || fail "resubmit of windowed shards: $(cat "$T/win2.out")"
grep -q "shards 1 of 6" "$T/win2.out" && grep -q "shards 5 of 6" "$T/win2.out" || fail "resubmit: $(cat "$T/win2.out")"
[ "$(tail -1 "$D4/job_offsets" | cut -d' ' -f2)" = 4 ] || fail "shard 5 was not resubmitted at offset 4: $(cat "$D4/job_offsets")"
wait_idle
[ -f "$D4/done/shard-1.ok" ] && [ -f "$D4/done/shard-5.ok" ] ||
    fail "the resubmitted windows did not complete: $(tail -5 "$D4"/logs/shard-5-*.out)"
grep -q "shard 5/6 on " "$D4/logs/shard-5-$(tail -1 "$D4/jobs").out" || fail "shard 5's resubmitted log: $(ls "$D4/logs")"

# ---- guards ----
# an array submitted by hand with another task count than the tool asked for runs nothing
sbatch --parsable --array=0-1 --output="$T/hand-%a.out" "$D/job.sh" 4 >/dev/null
wait_idle
grep -q "the array has 2 tasks but was meant to have 4" "$T/hand-0.out" ||
    fail "a 2-task array of a 4-shard job.sh was not refused: $(cat "$T"/hand-0.out)"
# a shard refuses a database recorded under another split
"$KC_BIN/kcollect" --config "$T/kc.json" $ARGS --shard 2/8 --db "$D/shard-2.db" >"$T/wrong.out" 2>&1 &&
    fail "kcollect --shard 2/8 resumed a 2/4 database"
grep -q "holds shard 2/4" "$T/wrong.out" || fail "no reason given: $(cat "$T/wrong.out")"

# ---- a submit sbatch refuses writes nothing (issue 35): 5 GPUs a task on a node of 4 ----
D2="$C/shared/run2"
rc=0
sh "$KCS" submit --dir "$D2" --shards 2 --gpus-per-task 5 --config "$T/kc.json" -- $ARGS \
    >"$T/gpu.out" 2>"$T/gpu.err" || rc=$?
[ $rc -eq 1 ] || fail "a submit sbatch refused: exit $rc ($(cat "$T/gpu.err"))"
grep -q "sbatch refused the array" "$T/gpu.err" || fail "no refusal: $(cat "$T/gpu.err")"
grep -q "sbatch: error: ." "$T/gpu.err" || fail "sbatch's reason is not shown: $(cat "$T/gpu.err")"
[ ! -e "$D2" ] || fail "a refused submit left files: $(find "$D2")"
sh "$KCS" submit --dir="$D2" --shards=2 --config="$T/kc.json" -- $ARGS >"$T/again.out" 2>&1 ||
    fail "a fresh submit after a refused one: $(cat "$T/again.out")"
scancel "$(head -1 "$D2/jobs")"
wait_idle

# ---- the time limit: warned, kcollect stops cleanly, exit 130, resubmit resumes ----
# slurmctld looks at time limits every 30 s and warns once fewer than S + 30 s are left: with 2
# minutes and S = 85 the warning comes 5 to 35 s after the start, once kcollect has work in
# flight (1 minute and S = 55 warned at 0 to 30 s: in the first second, nothing was left to resume)
D3="$C/shared/run3"
echo '{"endpoint": "bundled", "bundled_args": "--delay-ms 1000"}' >"$T/slow.json"
sh "$KCS" submit --dir "$D3" --shards 1 --stop-before 85 --sbatch '--time=2' --config "$T/slow.json" \
    -- --problems level1 --samples 4 --turns 1 --compile-only --concurrency 2 >"$T/slow.out" 2>&1 ||
    fail "submit with a time limit: $(cat "$T/slow.out")"
wait_idle
log=$(ls "$D3"/logs/shard-0-*.out)
grep -q "the time limit is near" "$log" || fail "the task was not warned before its time limit: $(tail -5 "$log")"
grep -q "kcollect exited 130" "$log" || fail "kcollect did not stop cleanly (exit 130): $(tail -5 "$log")"
[ ! -f "$D3/done/shard-0.ok" ] || fail "a task stopped by its time limit has a completion marker"
done1=$(sqlite3 "$D3/shard-0.db" "SELECT count(*) FROM trajectories WHERE status = 'done'")
[ "$(sqlite3 "$D3/shard-0.db" "SELECT count(*) FROM trajectories WHERE status <> 'done'")" -gt 0 ] ||
    fail "the slow collection finished within its time limit: nothing to resume"
sh "$KCS" resubmit --dir "$D3" >"$T/slow2.out" 2>&1 || fail "resubmit: $(cat "$T/slow2.out")"
job=$(tail -1 "$D3/jobs")
i=0
until grep -q "continuing run" "$D3/logs/shard-0-$job.out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 300 ] || fail "the resubmitted task did not resume: $(cat "$D3/logs/shard-0-$job.out" 2>/dev/null)"
    sleep 0.1
done
scancel "$job"
wait_idle
[ "$(sqlite3 "$D3/shard-0.db" "SELECT count(*) FROM trajectories WHERE status = 'done'")" -ge "$done1" ] ||
    fail "the resumed shard lost trajectories"
echo "ok: 4-task array on 4 GPUs, one cancelled and resubmitted, merged = unsharded run; 6 shards in windows of 4; refused submit, time limit"

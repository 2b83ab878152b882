#!/bin/sh
# kc_slurm.sh: runs a kcollect collection as a Slurm job array, one shard per task, one database
# per shard in a directory on a shared filesystem; lists which shards are complete, resubmits
# only the incomplete ones, and merges the shards (kcurate merge) and curates once.
#
#   kc_slurm.sh submit   --dir DIR --shards N [--config FILE] [--gpus-per-task G]
#                        [--max-running M] [--sbatch 'OPTIONS'] -- KCOLLECT_OPTIONS...
#   kc_slurm.sh status   --dir DIR          one line per shard; exit 0 when all are complete
#   kc_slurm.sh resubmit --dir DIR          submits the shards that are neither complete nor
#                                           queued or running (same N, same options)
#   kc_slurm.sh merge    --dir DIR [-o OUT] [-- KCURATE_RUN_OPTIONS...]
#
# Task I runs `kcollect --shard I/N --db DIR/shard-I.db KCOLLECT_OPTIONS` (N fixed at submit:
# a resubmitted subset keeps it). A shard is complete when DIR/done/shard-I.ok exists: written
# only after kcollect exited 0 (every trajectory of the shard finished). The job script refuses
# to run when the array was submitted with another task count than this tool asked for (an array
# of 32 tasks for 64 shards would silently leave half the work undone). The LLM endpoint(s) come
# from the config file (--config: kcollect's JSON, "endpoint": ["http://a/v1", ...]) or the
# options; GPUs per task from Slurm (--gpus-per-task G: sbatch --gres=gpu:G; Slurm sets
# CUDA_VISIBLE_DEVICES, which kverify's GPU workers use). Binaries: $KC_BIN (default: the bin/
# beside this script's tools/), problems: $KC_PROBLEMS; both must be visible on the nodes.
set -eu

die() { echo "kc_slurm: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
KC_BIN=${KC_BIN:-$here/bin}
KC_PROBLEMS=${KC_PROBLEMS:-$here/problems}

# quote ARG: ARG single-quoted for sh.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

usage() { sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

# ---- the plan: DIR/plan.env (N, the kcollect options, where the tools are) ----

load_plan() {
    [ -f "$DIR/plan.env" ] || die "$DIR has no plan.env: not a kc_slurm directory (submit first)"
    . "$DIR/plan.env"
}

write_job_script() {
    cat >"$DIR/job.sh" <<EOF
#!/bin/sh
# Written by kc_slurm.sh submit: one shard of the collection per array task. Submit it only
# through kc_slurm.sh (its argument is the task count it submitted the array with).
set -u
. '$DIR/plan.env'
expected=\${1:?"submit through kc_slurm.sh (submit or resubmit), not sbatch by hand"}
I=\${SLURM_ARRAY_TASK_ID:?"not a Slurm array task"}
if [ "\${SLURM_ARRAY_TASK_COUNT:-}" != "\$expected" ]; then
    echo "kc_slurm: the array has \${SLURM_ARRAY_TASK_COUNT:-no} tasks but was meant to have \$expected (\$N shards): refusing, nothing collected" >&2
    exit 3
fi
if [ "\$I" -ge "\$N" ]; then
    echo "kc_slurm: task \$I is beyond the \$N shards: refusing" >&2
    exit 3
fi
echo "kc_slurm: shard \$I/\$N on \$(hostname) (job \${SLURM_ARRAY_JOB_ID:-?}_\$I, GPUs: \${CUDA_VISIBLE_DEVICES:-none})"
rm -f "\$DIR/done/shard-\$I.ok"
eval "set -- \$KCOLLECT_ARGS"
# The task lives as long as kcollect does: on scancel (SIGTERM to the task's processes) kcollect
# finishes its work in flight and releases its lock, and Slurm must not count the task gone
# (and a resubmitted one start on the same database) before that; a trapped signal only wakes
# the wait, and kcollect, started with the default action, handles its own.
trap ':' TERM INT
KC_PROBLEMS="\$KC_PROBLEMS" "\$KC_BIN/kcollect" "\$@" --shard "\$I/\$N" --db "\$DIR/shard-\$I.db" &
child=\$!
while :; do
    wait \$child
    rc=\$?
    kill -0 \$child 2>/dev/null || break
done
if [ \$rc -eq 0 ]; then
    echo "shard \$I/\$N complete \$(date -u +%Y-%m-%dT%H:%M:%SZ) job \${SLURM_ARRAY_JOB_ID:-?}_\$I" >"\$DIR/done/.shard-\$I.tmp"
    mv "\$DIR/done/.shard-\$I.tmp" "\$DIR/done/shard-\$I.ok"
fi
exit \$rc
EOF
    chmod +x "$DIR/job.sh"
}

# submit_array SPEC COUNT: sbatch the job script as an array over SPEC (COUNT tasks).
submit_array() {
    spec=$1
    [ -n "${MAX_RUNNING:-}" ] && spec="$spec%$MAX_RUNNING"
    gres=""
    [ "${GPUS_PER_TASK:-0}" -gt 0 ] && gres="--gres=gpu:$GPUS_PER_TASK"
    # shellcheck disable=SC2086 # SBATCH_OPTS is a list of options
    out=$(sbatch --parsable --job-name=kcorpus --array="$spec" $gres ${SBATCH_OPTS:-} \
                 --output="$DIR/logs/shard-%a-%A.out" "$DIR/job.sh" "$2") ||
        die "sbatch failed: $out"
    job=${out%%;*}
    echo "$job" >>"$DIR/jobs"
    echo "submitted job array $job: shards $1 of $N (logs in $DIR/logs)"
}

cmd_submit() {
    N=""; CONFIG=""; GPUS_PER_TASK=0; MAX_RUNNING=""; SBATCH_OPTS=""
    while [ $# -gt 0 ]; do
        case $1 in
        --dir) DIR=$2; shift 2 ;;
        --shards) N=$2; shift 2 ;;
        --config) CONFIG=$2; shift 2 ;;
        --gpus-per-task) GPUS_PER_TASK=$2; shift 2 ;;
        --max-running) MAX_RUNNING=$2; shift 2 ;;
        --sbatch) SBATCH_OPTS=$2; shift 2 ;;
        --) shift; break ;;
        *) die "submit: unknown option '$1' (kcollect's options go after --)" ;;
        esac
    done
    [ -n "${DIR:-}" ] && [ -n "$N" ] || die "submit needs --dir DIR and --shards N"
    case $N in ''|*[!0-9]*) die "--shards takes a number" ;; esac
    [ "$N" -ge 1 ] || die "--shards must be at least 1"
    for a in "$@"; do
        case $a in --db|--db=*|--shard|--shard=*) die "kcollect's $a is set by kc_slurm (DIR/shard-I.db, --shard I/N)" ;; esac
    done
    mkdir -p "$DIR/logs" "$DIR/done"
    DIR=$(cd "$DIR" && pwd)
    if [ -f "$DIR/plan.env" ]; then
        old=$(sed -n 's/^N=//p' "$DIR/plan.env")
        [ "$old" = "$N" ] || die "$DIR holds a collection in $old shards; a different count would split it differently (use another --dir, or resubmit)"
        die "$DIR already holds this collection: use resubmit (or status)"
    fi
    args=""
    if [ -n "$CONFIG" ]; then
        [ -f "$CONFIG" ] || die "no config file $CONFIG"
        cp "$CONFIG" "$DIR/kcollect.json"
        args="--config $(quote "$DIR/kcollect.json")"
    fi
    for a in "$@"; do args="$args $(quote "$a")"; done
    [ -x "$KC_BIN/kcollect" ] || die "no kcollect at $KC_BIN (set KC_BIN)"
    {
        echo "N=$N"
        echo "DIR=$(quote "$DIR")"
        echo "KC_BIN=$(quote "$KC_BIN")"
        echo "KC_PROBLEMS=$(quote "$KC_PROBLEMS")"
        echo "KCOLLECT_ARGS=$(quote "$args")"
        echo "GPUS_PER_TASK=$GPUS_PER_TASK"
        echo "MAX_RUNNING=$MAX_RUNNING"
        echo "SBATCH_OPTS=$(quote "$SBATCH_OPTS")"
    } >"$DIR/plan.env"
    write_job_script
    submit_array "0-$((N - 1))" "$N"
}

# The array tasks of our jobs that Slurm still holds (pending or running), as "INDEX STATE".
queued_tasks() {
    [ -s "$DIR/jobs" ] || return 0
    command -v squeue >/dev/null 2>&1 || return 0
    squeue -h -r -j "$(paste -sd, "$DIR/jobs")" -o '%K %T' 2>/dev/null || true
}

# shard_state I QUEUED: complete | queued/running (Slurm's state) | incomplete | not started
shard_state() {
    if [ -f "$DIR/done/shard-$1.ok" ]; then echo complete; return; fi
    s=$(printf '%s\n' "$2" | awk -v i="$1" '$1 == i { print tolower($2); exit }')
    if [ -n "$s" ]; then echo "$s"; return; fi
    if [ -f "$DIR/shard-$1.db" ]; then echo incomplete; else echo "not started"; fi
}

# What the shard's database holds (trajectories done/open), when sqlite3 is there.
shard_detail() {
    [ -f "$DIR/shard-$1.db" ] && command -v sqlite3 >/dev/null 2>&1 || return 0
    sqlite3 -readonly "$DIR/shard-$1.db" \
        "SELECT printf(' (%d trajectories done, %d open)', sum(status = 'done'), sum(status <> 'done')) FROM trajectories" 2>/dev/null || true
}

cmd_status() {
    load_plan
    queued=$(queued_tasks)
    complete=0; i=0
    while [ $i -lt "$N" ]; do
        st=$(shard_state $i "$queued")
        [ "$st" = complete ] && complete=$((complete + 1))
        echo "shard $i/$N: $st$(shard_detail $i)"
        i=$((i + 1))
    done
    echo "$complete of $N shards complete"
    [ "$complete" -eq "$N" ]
}

cmd_resubmit() {
    load_plan
    queued=$(queued_tasks)
    todo=""; n=0; i=0
    while [ $i -lt "$N" ]; do
        case $(shard_state $i "$queued") in
        incomplete|"not started") todo="${todo:+$todo,}$i"; n=$((n + 1)) ;;
        esac
        i=$((i + 1))
    done
    if [ $n -eq 0 ]; then
        echo "nothing to resubmit (every shard is complete, queued or running: see status)"
        return 0
    fi
    submit_array "$todo" "$n"
}

cmd_merge() {
    load_plan
    OUT="$DIR/merged.db"
    while [ $# -gt 0 ]; do
        case $1 in
        -o) OUT=$2; shift 2 ;;
        --) shift; break ;;
        *) die "merge: unknown option '$1' (kcurate run's options go after --)" ;;
        esac
    done
    missing=""; i=0
    while [ $i -lt "$N" ]; do
        [ -f "$DIR/done/shard-$i.ok" ] || missing="$missing $i"
        i=$((i + 1))
    done
    [ -z "$missing" ] || die "shards not complete:$missing (status, then resubmit); nothing merged"
    set -- "$@"
    shards=""; i=0
    while [ $i -lt "$N" ]; do shards="$shards $(quote "$DIR/shard-$i.db")"; i=$((i + 1)); done
    eval "\"\$KC_BIN/kcurate\" merge $shards -o \"\$OUT\""
    KC_PROBLEMS="$KC_PROBLEMS" "$KC_BIN/kcurate" run --db "$OUT" "$@"
    echo "merged $N shards into $OUT and curated it"
}

[ $# -ge 1 ] || usage
sub=$1; shift
case $sub in
submit) cmd_submit "$@" ;;
status|resubmit|merge)
    [ "${1:-}" = --dir ] && [ $# -ge 2 ] || die "$sub needs --dir DIR"
    DIR=$(cd "$2" && pwd); shift 2
    "cmd_$sub" "$@" ;;
-h|--help) usage 0 ;;
*) die "unknown command '$sub' (submit, status, resubmit, merge)" ;;
esac

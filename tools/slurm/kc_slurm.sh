#!/bin/sh
# kc_slurm.sh: runs a kcollect collection as a Slurm job array, one shard per task, one database
# per shard in a directory on a shared filesystem; lists which shards are complete, resubmits
# only the incomplete ones, and merges the shards (kcurate merge) and curates once.
#
#   kc_slurm.sh submit   --dir DIR --shards N [--config FILE] [--gpus-per-task G]
#                        [--max-running M] [--stop-before S] [--window W] [--sbatch 'OPTIONS']
#                        -- KCOLLECT_OPTIONS...
#   kc_slurm.sh status   --dir DIR          one line per shard; exit 0 when all are complete
#   kc_slurm.sh resubmit --dir DIR          submits the shards that are neither complete nor
#                                           queued or running (same N, same options)
#   kc_slurm.sh merge    --dir DIR [-o OUT] [-- KCURATE_RUN_OPTIONS...]
#
# Options take their value as --opt VALUE or --opt=VALUE. Task I runs `kcollect --shard I/N --db
# DIR/shard-I.db KCOLLECT_OPTIONS` (N fixed at submit: a resubmitted subset keeps it). A shard is
# complete when DIR/done/shard-I.ok exists: written only after kcollect exited 0 (every
# trajectory of the shard finished). The job script refuses to run when the array was submitted
# with another task count than this tool asked for (an array of 32 tasks for 64 shards would
# silently leave half the work undone). Nothing is written into DIR before sbatch accepts the
# array: a refused submit (sbatch's own message is shown) leaves DIR as it was, and the same
# command can be run again once the cause is fixed.
#
# More shards than one array may hold: Slurm refuses array indices of MaxArraySize and above
# (1001 by default), so the shards go out in windows of W (--window, default the cluster's
# MaxArraySize from scontrol): one array per window, its task T running shard OFFSET + T, each
# array's offset kept in DIR/job_offsets beside its job id in DIR/jobs. resubmit windows the
# incomplete shards the same way. With --max-running M each window's array waits for the one
# before it to end (--dependency=afterany), so that no more than M tasks run at once in all.
# Each task's log is DIR/logs/shard-I-JOB.out (JOB: its array's job id); sbatch's own output
# file (DIR/logs/slurm-JOB_T.out) keeps only what a task says before it knows its shard.
#
# Stopping before the time limit: the array asks Slurm for --signal=B:USR1@S (S = --stop-before,
# default 60 seconds; 0: none), and the job script passes that signal on to kcollect as a
# SIGTERM: kcollect starts no new turn, finishes the ones in flight and exits 130, no marker is
# written, and resubmit resumes the shard. (Slurm's plain --signal=TERM@S reaches job steps only,
# and this array's tasks have none; B:TERM would reach the job script alone.)
#
# The LLM endpoint(s) come from the config file (--config: kcollect's JSON, "endpoint":
# ["http://a/v1", ...]) or the options; GPUs per task from Slurm (--gpus-per-task G: sbatch
# --gres=gpu:G; Slurm sets CUDA_VISIBLE_DEVICES, which kverify's GPU workers use). Binaries:
# $KC_BIN (default: the bin/ beside this script's tools/), problems: $KC_PROBLEMS; both must be
# visible on the nodes. Exit status: 0 done, 1 refused or failed (sbatch's message shown), 2
# usage error, and status exits 1 while a shard is not complete.
set -eu

die() { echo "kc_slurm: error: $*" >&2; exit 1; }
usage_error() { echo "kc_slurm: error: $*; see 'kc_slurm.sh --help'" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
KC_BIN=${KC_BIN:-$here/bin}
KC_PROBLEMS=${KC_PROBLEMS:-$here/problems}

# quote ARG: ARG single-quoted for sh.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

usage() { sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0; }

# --help or -h among a command's own options (before --): the usage, exit 0.
help_asked() {
    for a in "$@"; do
        case $a in --) return 0 ;; -h|--help) usage ;; esac
    done
}

# opt_value OPTION ARGS...: the value of the option in $1 (--opt=VALUE or --opt VALUE) into
# VALUE, and how many words it took into TAKE; a missing value (the end, or one of this tool's own
# options next: --dir --shards) is a usage error. --sbatch '--time=1' is a value.
opt_value() {
    case $1 in
    --*=*) VALUE=${1#*=}; TAKE=1 ;;
    *)
        [ $# -ge 2 ] || usage_error "$1 needs a value"
        case ${2%%=*} in
        --|--dir|--shards|--config|--gpus-per-task|--max-running|--stop-before|--window|--sbatch|--out|-o|--help|-h)
            usage_error "$1 needs a value, not the option '$2'" ;;
        esac
        VALUE=$2; TAKE=2 ;;
    esac
}

# number NAME VALUE: VALUE must be a whole number.
number() { case $2 in ''|*[!0-9]*) usage_error "$1 takes a whole number, not '$2'" ;; esac; }

# set_dir PATH: DIR = the absolute path of an existing directory.
set_dir() {
    [ -d "$1" ] || die "no directory $1 (submit first; --dir names the collection's directory)"
    DIR=$(cd "$1" && pwd) || die "cannot enter $1"
}

# ---- the plan: DIR/plan.env (N, the kcollect options, where the tools are) ----

load_plan() {
    [ -f "$DIR/plan.env" ] || die "$DIR has no plan.env: not a kc_slurm directory (submit first)"
    . "$DIR/plan.env"
}

write_plan() {
    {
        echo "N=$N"
        echo "DIR=$(quote "$DIR")"
        echo "KC_BIN=$(quote "$KC_BIN")"
        echo "KC_PROBLEMS=$(quote "$KC_PROBLEMS")"
        echo "KCOLLECT_ARGS=$(quote "$KCOLLECT_ARGS")"
        echo "GPUS_PER_TASK=$GPUS_PER_TASK"
        echo "MAX_RUNNING=$MAX_RUNNING"
        echo "STOP_BEFORE=$STOP_BEFORE"
        echo "WINDOW=$WINDOW"
        echo "LOGS_BY_SHARD=1"
        echo "SBATCH_OPTS=$(quote "$SBATCH_OPTS")"
    } >"$1"
}

# write_job_script FILE: the array task's script. It holds the plan itself (sbatch keeps a copy of
# the script as it was submitted), so a task never reads a plan that is not yet written.
write_job_script() {
    {
        echo "#!/bin/sh"
        echo "# Written by kc_slurm.sh submit: one shard of the collection per array task. Submit it only"
        echo "# through kc_slurm.sh (its arguments: the task count it submitted the array with, and the"
        echo "# array's offset: task T runs shard OFFSET + T)."
        echo "set -u"
        echo "N=$N"
        echo "DIR=$(quote "$DIR")"
        echo "KC_BIN=$(quote "$KC_BIN")"
        echo "KC_PROBLEMS=$(quote "$KC_PROBLEMS")"
        echo "KCOLLECT_ARGS=$(quote "$KCOLLECT_ARGS")"
        cat <<'EOF'
expected=${1:?"submit through kc_slurm.sh (submit or resubmit), not sbatch by hand"}
offset=${2:-0}
task=${SLURM_ARRAY_TASK_ID:?"not a Slurm array task"}
case $offset in ''|*[!0-9]*) echo "kc_slurm: offset '$offset' is not a whole number: refusing" >&2; exit 3 ;; esac
if [ "${SLURM_ARRAY_TASK_COUNT:-}" != "$expected" ]; then
    echo "kc_slurm: the array has ${SLURM_ARRAY_TASK_COUNT:-no} tasks but was meant to have $expected ($N shards): refusing, nothing collected" >&2
    exit 3
fi
I=$((offset + task))
if [ "$I" -ge "$N" ]; then
    echo "kc_slurm: task $task of offset $offset is shard $I, beyond the $N shards: refusing" >&2
    exit 3
fi
# from here on the shard's own log; sbatch's file (said nothing so far) goes
exec >>"$DIR/logs/shard-$I-${SLURM_ARRAY_JOB_ID:-none}.out" 2>&1
rm -f "$DIR/logs/slurm-${SLURM_ARRAY_JOB_ID:-none}_$task.out"
echo "kc_slurm: shard $I/$N on $(hostname) (job ${SLURM_ARRAY_JOB_ID:-?}_$task, GPUs: ${CUDA_VISIBLE_DEVICES:-none})"
rm -f "$DIR/done/shard-$I.ok"
eval "set -- $KCOLLECT_ARGS"
# The task lives as long as kcollect does: on scancel (SIGTERM to the task's processes) kcollect
# finishes its work in flight and releases its lock, and Slurm must not count the task gone (and
# a resubmitted one start on the same database) before that; a trapped TERM or INT only wakes the
# wait, and kcollect, started with the default action, handles its own. USR1 is the warning
# before the time limit (sbatch --signal=B:USR1@S, sent to this script alone): passed on to
# kcollect as the SIGTERM it stops cleanly on.
child=
trap ':' TERM INT
trap 'echo "kc_slurm: the time limit is near: stopping kcollect (resubmit resumes the shard)" >&2; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' USR1
KC_PROBLEMS="$KC_PROBLEMS" "$KC_BIN/kcollect" "$@" --shard "$I/$N" --db "$DIR/shard-$I.db" &
child=$!
while :; do
    wait $child
    rc=$?
    kill -0 $child 2>/dev/null || break
done
echo "kc_slurm: shard $I/$N: kcollect exited $rc"
if [ $rc -eq 0 ]; then
    echo "shard $I/$N complete $(date -u +%Y-%m-%dT%H:%M:%SZ) job ${SLURM_ARRAY_JOB_ID:-?}_$task" >"$DIR/done/.shard-$I.tmp"
    mv "$DIR/done/.shard-$I.tmp" "$DIR/done/shard-$I.ok"
fi
exit $rc
EOF
    } >"$1"
    chmod +x "$1"
}

# submit_array SCRIPT SPEC COUNT OFFSET SHARDS: sbatch SCRIPT as an array over SPEC (COUNT tasks;
# task T runs shard OFFSET + T; SHARDS names them for the messages), after job $AFTER when that is
# set; the job id goes to DIR/jobs, with its offset to DIR/job_offsets, and into JOB. sbatch's own
# message when it refuses.
submit_array() {
    spec=$2
    [ -n "${MAX_RUNNING:-}" ] && spec="$spec%$MAX_RUNNING"
    after=""
    [ -n "${AFTER:-}" ] && after="--dependency=afterany:$AFTER"
    output="$DIR/logs/slurm-%A_%a.out"
    [ "${LOGS_BY_SHARD:-0}" = 1 ] || output="$DIR/logs/shard-%a-%A.out" # a job.sh from before windows
    gres=""
    [ "${GPUS_PER_TASK:-0}" -gt 0 ] && gres="--gres=gpu:$GPUS_PER_TASK"
    signal=""
    [ "${STOP_BEFORE:-0}" -gt 0 ] && signal="--signal=B:USR1@$STOP_BEFORE"
    errs=$(mktemp) || die "cannot make a temporary file"
    # shellcheck disable=SC2086 # SBATCH_OPTS is a list of options
    if ! out=$(sbatch --parsable --job-name=kcorpus --array="$spec" $gres $signal $after ${SBATCH_OPTS:-} \
                      --output="$output" "$1" "$3" "$4" 2>"$errs"); then
        echo "kc_slurm: error: sbatch refused the array (shards $5 of $N):" >&2
        { cat "$errs"; [ -z "$out" ] || printf '%s\n' "$out"; } | sed 's/^/  /' >&2
        rm -f "$errs"
        return 1
    fi
    cat "$errs" >&2 # sbatch's warnings
    rm -f "$errs"
    JOB=$(printf '%s\n' "$out" | tail -1)
    JOB=${JOB%%;*}
    echo "$JOB" >>"$DIR/jobs"
    echo "$JOB $4" >>"$DIR/job_offsets"
    echo "submitted job array $JOB: shards $5 of $N (logs in $DIR/logs)"
}

# cluster_window: the shards one array may hold: --window, else the cluster's MaxArraySize (the
# highest index an array may use is one less), else Slurm's default of 1001.
cluster_window() {
    if [ -n "${WINDOW:-}" ]; then echo "$WINDOW"; return; fi
    w=$(scontrol show config 2>/dev/null | sed -n 's/^MaxArraySize *= *\([0-9]*\).*/\1/p')
    [ -n "$w" ] || w=1001
    [ "$w" -ge 1 ] || die "this cluster allows no job arrays (MaxArraySize = 0)"
    echo "$w"
}

# range_spec A B: the shard range A-B (or A) as text.
range_spec() { if [ "$1" -eq "$2" ]; then echo "$1"; else echo "$1-$2"; fi; }

# submit_windows SCRIPT AFTER SHARDS...: the shards (ascending) as one array per window of
# cluster_window shards (indices relative to the window's first shard), each after the one
# before when --max-running caps them, the first after job AFTER when that is not empty;
# returns 1 at the first refusal (earlier windows stay submitted: resubmit finishes the rest).
submit_windows() {
    script=$1; AFTER=$2; shift 2
    w=$(cluster_window) || return 1
    while [ $# -gt 0 ]; do
        base=$(( $1 / w * w ))
        spec=""; names=""; count=0; lo=""; prev=""
        while [ $# -gt 0 ] && [ $(( $1 / w * w )) -eq "$base" ]; do
            spec="${spec:+$spec,}$(( $1 - base ))"
            if [ -n "$prev" ] && [ "$1" -eq $((prev + 1)) ]; then :; else
                [ -z "$lo" ] || names="${names:+$names,}$(range_spec "$lo" "$prev")"
                lo=$1
            fi
            prev=$1; count=$((count + 1)); shift
        done
        names="${names:+$names,}$(range_spec "$lo" "$prev")"
        # a whole window as a range: a short array spec whatever its size
        [ "$count" -eq $((prev - base + 1)) ] && [ "$lo" -eq "$base" ] && spec=$(range_spec 0 $((prev - base)))
        submit_array "$script" "$spec" "$count" "$base" "$names" || return 1
        [ -z "${MAX_RUNNING:-}" ] || AFTER=$JOB
    done
}

cmd_submit() {
    help_asked "$@"
    N=""; CONFIG=""; GPUS_PER_TASK=0; MAX_RUNNING=""; SBATCH_OPTS=""; STOP_BEFORE=60; WINDOW=""; dir=""
    while [ $# -gt 0 ]; do
        case $1 in
        --) shift; break ;;
        --dir|--dir=*) opt_value "$@"; dir=$VALUE ;;
        --shards|--shards=*) opt_value "$@"; N=$VALUE; number --shards "$N" ;;
        --config|--config=*) opt_value "$@"; CONFIG=$VALUE ;;
        --gpus-per-task|--gpus-per-task=*) opt_value "$@"; GPUS_PER_TASK=$VALUE; number --gpus-per-task "$VALUE" ;;
        --max-running|--max-running=*) opt_value "$@"; MAX_RUNNING=$VALUE; number --max-running "$VALUE" ;;
        --stop-before|--stop-before=*) opt_value "$@"; STOP_BEFORE=$VALUE; number --stop-before "$VALUE" ;;
        --window|--window=*) opt_value "$@"; WINDOW=$VALUE; number --window "$VALUE"
            [ "$VALUE" -ge 1 ] || usage_error "--window must be at least 1" ;;
        --sbatch|--sbatch=*) opt_value "$@"; SBATCH_OPTS=$VALUE ;;
        *) usage_error "submit: unknown option '$1' (kcollect's options go after --)" ;;
        esac
        shift "$TAKE"
    done
    [ -n "$dir" ] && [ -n "$N" ] || usage_error "submit needs --dir DIR and --shards N"
    [ "$N" -ge 1 ] || usage_error "--shards must be at least 1"
    for a in "$@"; do
        case $a in --db|--db=*|--shard|--shard=*) usage_error "kcollect's $a is set by kc_slurm (DIR/shard-I.db, --shard I/N)" ;; esac
    done
    [ -z "$CONFIG" ] || [ -f "$CONFIG" ] || die "no config file $CONFIG"
    [ -x "$KC_BIN/kcollect" ] || die "no kcollect at $KC_BIN (set KC_BIN)"
    command -v sbatch >/dev/null 2>&1 || die "no sbatch here: submit from a Slurm login node"
    if [ -f "$dir/plan.env" ]; then
        old=$(sed -n 's/^N=//p' "$dir/plan.env")
        [ "$old" = "$N" ] || die "$dir holds a collection in $old shards; a different count would split it differently (use another --dir, or resubmit)"
        die "$dir already holds this collection: use resubmit (or status)"
    fi
    [ -e "$dir" ] && [ ! -d "$dir" ] && die "$dir is not a directory"
    submit_new "$dir" "$@"
}

# submit_new DIR KCOLLECT_OPTIONS...: what the tasks need before they start (the directory, its
# logs/ and done/, the config copy) is made, then sbatch; when sbatch refuses, what was made goes
# again, so nothing is left that a new submit would refuse.
submit_new() {
    made=""
    for d in "$1" "$1/logs" "$1/done"; do
        [ -d "$d" ] && continue
        mkdir -p "$d" || die "cannot create $d"
        made="$d $made"
    done
    DIR=$(cd "$1" && pwd) || die "cannot enter $1"
    shift
    args=""
    if [ -n "$CONFIG" ]; then
        cp "$CONFIG" "$DIR/kcollect.json" || die "cannot copy $CONFIG into $DIR"
        args="--config $(quote "$DIR/kcollect.json")"
    fi
    for a in "$@"; do args="$args $(quote "$a")"; done
    KCOLLECT_ARGS=$args
    script=$(mktemp "$DIR/.job.sh.XXXXXX") || die "cannot write into $DIR"
    write_job_script "$script"
    LOGS_BY_SHARD=1
    trap 'submit_stopped "was interrupted" 130' INT TERM
    submit_windows "$script" "" $(seq 0 $((N - 1))) || submit_stopped "refused a window" 1
    trap - INT TERM
    mv "$script" "$DIR/job.sh"
    write_plan "$DIR/plan.env"
}

# submit_stopped WHAT STATUS: a submit that sbatch refused or that was interrupted. With a window
# accepted, the plan and job script are kept (the accepted windows run that script) and resubmit
# finishes the rest; with none, what submit_new made goes again. Exits STATUS.
submit_stopped() {
    trap - INT TERM
    if [ -s "$DIR/jobs" ]; then
        mv "$script" "$DIR/job.sh"
        write_plan "$DIR/plan.env"
        echo "kc_slurm: error: the submit $1 after part of the array ($DIR/jobs); once the cause is fixed: kc_slurm.sh resubmit --dir $DIR" >&2
        exit "$2"
    fi
    rm -f "$script" "$DIR/jobs" "$DIR/job_offsets"
    [ -z "$CONFIG" ] || rm -f "$DIR/kcollect.json"
    for d in $made; do rmdir "$d" 2>/dev/null || true; done
    exit "$2"
}

# The shards of our jobs' array tasks that Slurm still holds (pending or running), as "SHARD
# STATE JOB": a task's index plus its array's offset (DIR/job_offsets; none there: 0).
queued_tasks() {
    [ -s "$DIR/jobs" ] || return 0
    command -v squeue >/dev/null 2>&1 || return 0
    squeue -h -r -j "$(paste -sd, "$DIR/jobs")" -o '%F %K %T' 2>/dev/null |
        awk -v offsets="$DIR/job_offsets" '
            BEGIN { while ((getline line < offsets) > 0) { split(line, f, " "); off[f[1]] = f[2] } }
            { print $2 + off[$1], $3, $1 }' || true
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
    [ $# -eq 0 ] || usage_error "status: unexpected argument '$1'"
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
    [ $# -eq 0 ] || usage_error "resubmit: unexpected argument '$1'"
    load_plan
    # a plan written before --stop-before: its job script has no USR1 trap, and USR1 would end it
    STOP_BEFORE=${STOP_BEFORE:-0}
    # a plan written before windows: its job script knows no offset, so one array holds them all
    [ "${LOGS_BY_SHARD:-0}" = 1 ] || WINDOW=$N
    command -v sbatch >/dev/null 2>&1 || die "no sbatch here: resubmit from a Slurm login node"
    queued=$(queued_tasks)
    todo=""; n=0; i=0
    while [ $i -lt "$N" ]; do
        case $(shard_state $i "$queued") in
        incomplete|"not started") todo="$todo $i"; n=$((n + 1)) ;;
        esac
        i=$((i + 1))
    done
    if [ $n -eq 0 ]; then
        echo "nothing to resubmit (every shard is complete, queued or running: see status)"
        return 0
    fi
    # under --max-running the new windows queue behind our last array Slurm still holds
    last=""
    [ -z "${MAX_RUNNING:-}" ] || last=$(printf '%s\n' "$queued" | awk 'NF == 3 { print $3 }' | sort -n | tail -1)
    # shellcheck disable=SC2086 # todo is a list of shard numbers
    submit_windows "$DIR/job.sh" "$last" $todo || exit 1
}

cmd_merge() {
    OUT=""
    while [ $# -gt 0 ]; do
        case $1 in
        --) shift; break ;;
        -o|--out|--out=*) opt_value "$@"; OUT=$VALUE ;;
        *) usage_error "merge: unknown option '$1' (kcurate run's options go after --)" ;;
        esac
        shift "$TAKE"
    done
    load_plan
    OUT=${OUT:-$DIR/merged.db}
    missing=""; i=0
    while [ $i -lt "$N" ]; do
        [ -f "$DIR/done/shard-$i.ok" ] || missing="$missing $i"
        i=$((i + 1))
    done
    [ -z "$missing" ] || die "shards not complete:$missing (status, then resubmit); nothing merged"
    shards=""; i=0
    while [ $i -lt "$N" ]; do shards="$shards $(quote "$DIR/shard-$i.db")"; i=$((i + 1)); done
    eval "\"\$KC_BIN/kcurate\" merge $shards -o \"\$OUT\"" || exit 1
    KC_PROBLEMS="$KC_PROBLEMS" "$KC_BIN/kcurate" run --db "$OUT" "$@" || exit 1
    echo "merged $N shards into $OUT and curated it"
}

# status, resubmit, merge: --dir DIR (or --dir=DIR) first, then the command's own arguments.
with_dir() {
    sub=$1; shift
    help_asked "$@"
    case ${1:-} in
    --dir|--dir=*) opt_value "$@"; shift "$TAKE"; set_dir "$VALUE" ;;
    *) usage_error "$sub needs --dir DIR" ;;
    esac
    "cmd_$sub" "$@"
}

[ $# -ge 1 ] || usage_error "no command (submit, status, resubmit, merge)"
sub=$1; shift
case $sub in
submit) cmd_submit "$@" ;;
status|resubmit|merge) with_dir "$sub" "$@" ;;
-h|--help) usage ;;
*) usage_error "unknown command '$sub' (submit, status, resubmit, merge)" ;;
esac

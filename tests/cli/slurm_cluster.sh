# slurm_cluster.sh: a one-node Slurm cluster on the loopback (sourced by tests/cli/
# test_slurm_array.sh and tools/device/slurm_gpus.sh): its own munged (a fresh key) and
# slurmctld/slurmd (own slurm.conf, free ports, state under $T/cluster), whose node declares 4
# GPUs as a generic resource. The caller defines skip and fail and has lib.sh's $T.
#   start_cluster   starts it; sets C (the cluster directory: shared/ is for the jobs) and
#                   exports SLURM_CONF; every daemon is stopped at exit (stop_cluster)
#   wait_idle       until Slurm holds none of our jobs
# KC_SLURM_GPUS=real gives the node the host's /dev/nvidia0-3 (a GPU host: Slurm sets each
# task's CUDA_VISIBLE_DEVICES); otherwise placeholder devices nothing opens. KC_SLURM_BUNDLE=DIR
# runs Slurm and munge from a bundle (tools/device/slurm_bundle.sh: DIR/bin, DIR/lib and
# DIR/plugins) on a machine without the packages.

if [ -n "${KC_SLURM_BUNDLE:-}" ]; then
    PATH="$KC_SLURM_BUNDLE/bin:$PATH"
    LD_LIBRARY_PATH="$KC_SLURM_BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PATH LD_LIBRARY_PATH
fi
for t in munged slurmctld slurmd sbatch squeue scancel; do
    command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] ||
        skip "$t is not installed (make deps installs slurmctld, slurmd, slurm-client and munge)"
done
PATH="$PATH:/usr/sbin"

C="$T/cluster"
MUNGED_PID= CTLD_PID= SLURMD_PID=
stop_cluster() {
    [ -n "$CTLD_PID" ] && SLURM_CONF="$C/slurm.conf" scancel --quiet --user="$(id -un)" 2>/dev/null
    for p in $SLURMD_PID $CTLD_PID $MUNGED_PID; do kill "$p" 2>/dev/null || true; done
    for p in $SLURMD_PID $CTLD_PID $MUNGED_PID; do
        i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$p" 2>/dev/null || true
    done
}
trap 'stop_cluster; cleanup' EXIT
trap 'exit 1' INT TERM

free_ports() {
    python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'
}

start_munge() {
    dd if=/dev/urandom of="$C/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$C/munge/munge.key"
    munged --force --key-file="$C/munge/munge.key" --socket="$C/munge/sock" \
        --pid-file="$C/munge/munged.pid" --log-file="$C/munge/munged.log" \
        --seed-file="$C/munge/seed" >"$C/munged.out" 2>&1 ||
        skip "munged does not start here: $(tail -1 "$C/munged.out")"
    MUNGED_PID=$(cat "$C/munge/munged.pid")
}

# write_gres: gres.conf, one line per GPU of the node; sets NGPU. 4 GPUs as Slurm 22.05 accepts
# them without hardware: a gpu without File= is dropped ("file-less GPU"), and one whose file is
# not a character device sets no CUDA_VISIBLE_DEVICES; links to /dev/null named gpu0-3 give the
# indices 0-3, and nothing opens them. On a GPU host (KC_SLURM_GPUS=real) the node's GPUs are
# the host's first 4 /dev/nvidiaN, whatever their minor numbers (a container's need not start
# at 0).
write_gres() {
    echo "AutoDetect=off" >"$C/gres.conf"
    if [ "${KC_SLURM_GPUS:-}" = real ]; then
        for d in $(ls /dev/nvidia[0-9]* 2>/dev/null | sort -V | head -4); do
            if [ -c "$d" ]; then echo "NodeName=kcnode Name=gpu File=$d" >>"$C/gres.conf"; fi
        done
    else
        mkdir -p "$C/dev"
        for g in 0 1 2 3; do
            ln -s /dev/null "$C/dev/gpu$g"
            echo "NodeName=kcnode Name=gpu File=$C/dev/gpu$g" >>"$C/gres.conf"
        done
    fi
    NGPU=$(grep -c File= "$C/gres.conf" || true)
    [ "$NGPU" -gt 0 ] || skip "KC_SLURM_GPUS=real but no /dev/nvidiaN here"
}

# write_conf CTLD_PORT SLURMD_PORT
write_conf() {
    write_gres
    HOST=$(hostname -s)
    USER_NAME=$(id -un)
    cat >"$C/slurm.conf" <<EOF
ClusterName=kctest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=$USER_NAME
SlurmdUser=$USER_NAME
AuthType=auth/munge
AuthInfo=socket=$C/munge/sock
CredType=cred/munge
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool/%n
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/slurmctld.log
SlurmdLogFile=$C/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=5
SlurmctldTimeout=30
SlurmdTimeout=30
GresTypes=gpu
NodeName=kcnode NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 Gres=gpu:$NGPU State=UNKNOWN
PartitionName=kc Nodes=kcnode Default=YES MaxTime=INFINITE State=UP
MaxArraySize=${SLURM_MAX_ARRAY:-1001}
EOF
    [ -n "${KC_SLURM_BUNDLE:-}" ] && echo "PluginDir=$KC_SLURM_BUNDLE/plugins" >>"$C/slurm.conf"
    # a cgroup-v2 host (the GPU machines' containers) has no systemd to ask for slurmd's scope
    printf 'IgnoreSystemd=yes\nIgnoreSystemdOnFailure=yes\n' >"$C/cgroup.conf"
}

# What a node that did not come up left: the daemons' logs and output, whether they still run,
# sinfo's own error and the libraries the daemons resolve (on stdout, for the caller's log).
cluster_diagnosis() {
    for f in slurmctld.log slurmd.log slurmctld.out slurmd.out munged.out gres.conf; do
        echo "--- $f"; tail -8 "$C/$f" 2>&1 || true
    done
    echo "--- daemons alive: slurmctld $(kill -0 "$CTLD_PID" 2>/dev/null && echo yes || echo no)," \
        "slurmd $(kill -0 "$SLURMD_PID" 2>/dev/null && echo yes || echo no)"
    echo "--- sinfo: $(sinfo -h -N 2>&1 | tail -2)"
    echo "--- unresolved libraries: $(ldd "$(command -v slurmctld)" "$(command -v slurmd)" 2>&1 | grep -c 'not found')"
}

start_cluster() {
    mkdir -p "$C/state" "$C/spool" "$C/munge" "$C/shared"
    chmod 700 "$C/munge"
    start_munge
    write_conf $(free_ports)
    export SLURM_CONF="$C/slurm.conf"
    stepd=
    [ -n "${KC_SLURM_BUNDLE:-}" ] && stepd="-d $KC_SLURM_BUNDLE/bin/slurmstepd"
    # slurmd's cgroup/v2 makes its stepd scope under system.slice, which only systemd creates
    if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
        mkdir -p /sys/fs/cgroup/system.slice 2>/dev/null || true
    fi
    slurmctld -D -c -f "$C/slurm.conf" >"$C/slurmctld.out" 2>&1 &
    CTLD_PID=$!
    # shellcheck disable=SC2086
    slurmd -D -N kcnode -f "$C/slurm.conf" $stepd >"$C/slurmd.out" 2>&1 &
    SLURMD_PID=$!
    i=0
    until sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; do
        i=$((i + 1))
        if [ $i -gt 150 ] || ! kill -0 "$CTLD_PID" 2>/dev/null || ! kill -0 "$SLURMD_PID" 2>/dev/null; then
            cluster_diagnosis
            skip "slurmctld/slurmd did not bring the node up here (logs above)"
        fi
        sleep 0.2
    done
}

wait_idle() {
    i=0
    while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
        i=$((i + 1)); [ $i -lt 900 ] || { squeue; fail "jobs did not finish"; }; sleep 0.2
    done
}

#!/bin/sh
# slurm_bundle.sh DIR: Debian 12's Slurm (22.05) and munge, installed here by `make deps`, as a
# bundle a GPU host without them can run from (the device machine has no Slurm and installs
# nothing): DIR/bin the daemons and the clients the Slurm path uses, DIR/plugins every Slurm
# plugin, DIR/lib libslurmfull and the libraries the binaries and the plugins the test
# cluster loads link to (not glibc's own: the host's is as new or newer). tests/cli/
# slurm_cluster.sh runs from it with KC_SLURM_BUNDLE=DIR (PATH, LD_LIBRARY_PATH, PluginDir,
# slurmd -d DIR/bin/slurmstepd); tools/device/slurm_gpus.sh is the device call that does.
set -eu
DIR=${1:?usage: slurm_bundle.sh DIR}
PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm
[ -d "$PLUGINS" ] || { echo "slurm_bundle: no $PLUGINS (make deps installs Slurm)" >&2; exit 1; }
rm -rf "$DIR"
mkdir -p "$DIR/bin" "$DIR/lib" "$DIR/plugins"
bins="/usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/slurmstepd /usr/sbin/munged"
for c in sbatch squeue scancel sinfo scontrol; do bins="$bins $(command -v "$c")"; done
for b in $bins; do cp "$b" "$DIR/bin/"; done
cp "$PLUGINS"/*.so "$DIR/plugins/"
cp "$PLUGINS/libslurmfull.so" "$DIR/lib/"
# the plugins the daemons and slurmstepd of slurm_cluster.sh's cluster load (read from their
# /proc/PID/maps during test_slurm_array), with site_factor_none and node_features_none besides,
# and cgroup_v2 (a cgroup-v2 host's slurmd loads it: libdbus, libsystemd):
# resolving every plugin's libraries would carry 80 MB (HDF5, MySQL, ...)
used="accounting_storage_none acct_gather_energy_none acct_gather_filesystem_none
acct_gather_interconnect_none acct_gather_profile_none auth_munge cgroup_v1 core_spec_none
cred_munge ext_sensors_none gpu_generic gres_gpu hash_k12 job_container_none jobacct_gather_none
jobcomp_none mcs_none mpi_cray_shasta mpi_none mpi_pmi2 preempt_none prep_script priority_basic
proctrack_linuxproc route_default sched_builtin select_cons_res select_cons_tres
select_cray_aries select_linear serializer_json serializer_url_encoded serializer_yaml
switch_cray_aries switch_none task_none topology_none site_factor_none node_features_none cgroup_v2"
objs=$bins
for p in $used; do [ -f "$PLUGINS/$p.so" ] && objs="$objs $PLUGINS/$p.so"; done
# shellcheck disable=SC2086
for o in $objs; do ldd "$o"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case $(basename "$lib") in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
    *) cp -L "$lib" "$DIR/lib/$(basename "$lib")" ;;
    esac
done
echo "slurm_bundle: $DIR: $(ls "$DIR/bin" | wc -l) binaries, $(ls "$DIR/plugins" | wc -l) plugins," \
     "$(ls "$DIR/lib" | wc -l) libraries, $(du -sh "$DIR" | cut -f1)"

#!/bin/sh
# deps.sh: installs the Debian packages kcorpus builds and tests with (idempotent;
# `make deps`). The CUDA 13 toolkit is expected at $CUDA (default /usr/local/cuda).
set -eu
# clang and libclang-rt-14-dev (libFuzzer, ASan/UBSan runtimes): the fuzz targets of tests/fuzz/;
# python3 (standard library only): the level-2 generator check and the kernelbench module checks.
PKGS="gcc make pkg-config libsqlite3-dev sqlite3 libjansson-dev libcurl4-openssl-dev libssl-dev
      libarchive-dev zlib1g-dev libcmocka-dev ca-certificates clang libclang-rt-14-dev python3"
# libmicrohttpd-dev: the HTTP server of `kverify serve` (tests/cli/test_serve*.sh).
PKGS="$PKGS libmicrohttpd-dev"
# libjs-chart.js: the charts of `kcurate report` (inlined into the page); chromium: the test
# that renders the report headless (tests/cli/test_audit_report.sh).
PKGS="$PKGS libjs-chart.js chromium"
# slurmctld, slurmd, slurm-client, munge: the one-node Slurm cluster of tests/cli/test_slurm_array.sh
# (tools/slurm/kc_slurm.sh, job arrays). Installing them starts no daemon here that the test needs.
PKGS="$PKGS slurmctld slurmd slurm-client munge"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "deps: installing$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
else
    echo "deps: all Debian packages present"
fi
CUDA="${CUDA:-/usr/local/cuda}"
if [ ! -f "$CUDA/include/nvrtc.h" ] || [ ! -e "$CUDA/lib64/libnvrtc.so" ]; then
    echo "deps: the CUDA toolkit (NVRTC) is missing at $CUDA; install CUDA 13 or set CUDA=" >&2
    exit 1
fi

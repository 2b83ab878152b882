#!/bin/sh
# deps.sh [run|test] [--list]: installs the Debian packages kcorpus needs, by purpose
# (idempotent); --list prints the purpose's packages, one a line, and installs nothing.
#   run   what building the tools and running them needs (`make demo`, `make deps-run`)
#   test  that plus what only the tests need (`make test`, `make deps`: the default)
# The CUDA 13 toolkit is expected at $CUDA (default /usr/local/cuda).
set -eu
PURPOSE="${1:-test}"
case "$PURPOSE" in
run|test) ;;
*) echo "deps.sh: error: unknown purpose '$PURPOSE'; use run or test" >&2; exit 2 ;;
esac
# Build and run: the compiler, the libraries the tools link, sqlite3 (the demo and users read the
# database with it) and libjs-chart.js (inlined into `kcurate report` pages).
PKGS="gcc make pkg-config libsqlite3-dev sqlite3 libjansson-dev libcurl4-openssl-dev libssl-dev
      libarchive-dev zlib1g-dev ca-certificates libjs-chart.js"
# libmicrohttpd-dev: the HTTP server of `kverify serve` (built by every target).
PKGS="$PKGS libmicrohttpd-dev"
if [ "$PURPOSE" = test ]; then
    # libcmocka-dev: the unit tests; clang and libclang-rt-14-dev (libFuzzer, ASan/UBSan
    # runtimes): the fuzz targets of tests/fuzz/; python3 (standard library only): the level-2
    # generator check and the kernelbench module checks; chromium: the test that renders the
    # report headless (tests/cli/test_audit_report.sh).
    PKGS="$PKGS libcmocka-dev clang libclang-rt-14-dev python3 chromium"
    # slurmctld, slurmd, slurm-client, munge: the one-node Slurm cluster of
    # tests/cli/test_slurm_array.sh (tools/slurm/kc_slurm.sh); installing them starts no daemon
    # the test needs.
    PKGS="$PKGS slurmctld slurmd slurm-client munge"
fi
if [ "${2:-}" = --list ]; then
    for p in $PKGS; do echo "$p"; done
    exit 0
fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "deps ($PURPOSE): installing$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
else
    echo "deps ($PURPOSE): all Debian packages present"
fi
CUDA="${CUDA:-/usr/local/cuda}"
if [ ! -f "$CUDA/include/nvrtc.h" ] || [ ! -e "$CUDA/lib64/libnvrtc.so" ]; then
    echo "deps: the CUDA toolkit (NVRTC) is missing at $CUDA; install CUDA 13 or set CUDA=" >&2
    exit 1
fi

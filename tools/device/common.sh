# common.sh: what the device scripts (round5.sh, round6.sh) share, sourced from the repository
# root: the environment the carried binaries need, $OUT and its summary, and kverify serve
# rewarding level-1 completions (tools/baselines/bench_serve.py) on every GPU of the host.
set -u
OUT="${OUT:-/tmp/kc-out}"
mkdir -p "$OUT"
R=$(pwd)
export LD_LIBRARY_PATH="$R/.devlibs:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64"
export PYTHONUNBUFFERED=1 KC_ROOT="$R" KC_PROBLEMS="$R/problems"
B="$R/.devbuild/bin"
S="$OUT/summary.txt"
note() { echo "=== $1 ($(date +%T))" >> "$S"; }

# serve SINGLE BATCH: one request at a time SINGLE times, then BATCH completions; $OUT/serve.txt
serve() {
    port=18765
    "$B/kverify" serve --port $port --db /tmp/serve.db > /tmp/serve.log 2>&1 &
    sp=$!
    for _ in $(seq 90); do
        python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=1)" \
            2>/dev/null && break
        sleep 1
    done
    timeout 200 python3 tools/baselines/bench_serve.py --url "http://127.0.0.1:$port" --suite level1 \
        --single "$1" --batch "$2" --no-run --kverify "$B/kverify" > "$OUT/serve.txt" 2>&1
    kill $sp 2>/dev/null; wait $sp 2>/dev/null
    tail -5 /tmp/serve.log >> "$OUT/serve.txt"
}

"""bench_serve: latency and batch time of `kverify serve`, and the same batch through `kverify run`
(issue 25's H100 measurements; standard library only).

    kverify serve --port 8765 --db /tmp/serve.db &          # on the GPU host
    python3 tools/baselines/bench_serve.py --url http://127.0.0.1:8765 --suite level1 \
        --single 50 --batch 256 --json docs/results/serve_h100.json

The completions are the suite's reference kernels (correct kernels: every one is checked and
timed), cycled to the batch size. Steps:
  1. --single N requests one after another, one item each: latency p50, p95, max;
  2. one request of --batch items: the time to reward the whole batch;
  3. the same batch as --batch concurrent one-item requests (what a trainer without batching does);
  4. unless --no-run: the same items imported into a fresh database and verified by
     `kverify run` (the start of its compile servers and GPU workers included, as in a
     training step that would launch it).
Prints one JSON object (and writes it to --json), with the service's /health for its settings.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kc_reward  # noqa: E402


def references(kverify, problems_dir, suite, count, tmp):
    """count items cycling over the suite's references, as the verifier loads them (shared
    kernel files expanded: `kverify problems --show-reference`), each also written to tmp."""
    files = sorted(glob.glob(os.path.join(problems_dir, suite, "*.cu")))
    if not files:
        sys.exit(f"no reference kernels in {problems_dir}/{suite}")
    loaded = []
    for path in files[:count]:
        pid = f"{suite}/{os.path.basename(path)[:-3]}"
        text = subprocess.run([kverify, "problems", "--show-reference", pid], check=True,
                              capture_output=True, text=True).stdout
        copy = os.path.join(tmp, pid.replace("/", "_") + ".cu")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(text)
        loaded.append((pid, text, copy))
    return [loaded[i % len(loaded)] for i in range(count)]


def percentile(values, q):
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(q / 100 * (len(values) - 1))))
    return values[k]


def verdict_counts(results):
    counts = {}
    for r in results:
        v = r.get("verdict", "error")
        counts[v] = counts.get(v, 0) + 1
    return counts


def bench_single(url, items, n):
    latencies, results = [], []
    for pid, text, _ in items[:n]:
        t0 = time.perf_counter()
        results += kc_reward.verify([(pid, text)], url=url)
        latencies.append(time.perf_counter() - t0)
    return {"n": len(latencies), "p50_s": percentile(latencies, 50),
            "p95_s": percentile(latencies, 95), "max_s": max(latencies),
            "mean_s": statistics.mean(latencies), "verdicts": verdict_counts(results)}


def bench_batch(url, items):
    t0 = time.perf_counter()
    results = kc_reward.verify([(pid, text) for pid, text, _ in items], url=url)
    secs = time.perf_counter() - t0
    return {"n": len(items), "seconds": secs, "items_per_s": len(items) / secs,
            "verdicts": verdict_counts(results)}


def bench_concurrent(url, items):
    def one(item):
        return kc_reward.verify([(item[0], item[1])], url=url)[0]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(items)) as pool:
        results = list(pool.map(one, items))
    secs = time.perf_counter() - t0
    return {"n": len(items), "seconds": secs, "verdicts": verdict_counts(results)}


def bench_kverify_run(kverify, items, compile_only):
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        by_problem = {}
        for pid, _, path in items:
            by_problem.setdefault(pid, []).append(path)
        for pid, paths in by_problem.items():
            subprocess.run([kverify, "import", "--db", db, "--problem", pid, *paths], check=True,
                           stdout=subprocess.DEVNULL)
        t0 = time.perf_counter()
        run = subprocess.run([kverify, "run", "--db", db] + (["--compile-only"] if compile_only else []),
                             capture_output=True, text=True)
        secs = time.perf_counter() - t0
        summary = [line for line in run.stdout.splitlines() if line.startswith(("verified", "GPU"))]
        return {"n": len(items), "seconds": secs, "exit": run.returncode, "summary": summary}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--url", default=os.environ.get("KC_REWARD_URL", kc_reward.DEFAULT_URL))
    ap.add_argument("--problems", default=os.environ.get("KC_PROBLEMS", "problems"))
    ap.add_argument("--suite", default="level1")
    ap.add_argument("--single", type=int, default=50, help="sequential one-item requests")
    ap.add_argument("--batch", type=int, default=256, help="items of the batch")
    ap.add_argument("--no-concurrent", action="store_true")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--kverify", default=os.path.join(here, "..", "..", "bin", "kverify"),
                    help="the kverify binary (default: bin/kverify of this tree)")
    ap.add_argument("--no-run", action="store_true", help="skip the `kverify run` comparison")
    ap.add_argument("--compile-only", action="store_true",
                    help="kverify run --compile-only (a CPU smoke run beside serve --compile-only)")
    ap.add_argument("--json", help="also write the result here")
    a = ap.parse_args()
    url = a.url.rstrip("/")
    tmp = tempfile.TemporaryDirectory()
    items = references(a.kverify, a.problems, a.suite, max(a.batch, a.single), tmp.name)
    with urllib.request.urlopen(url + "/health", timeout=30) as resp:
        out = {"health": json.loads(resp.read())}
    kc_reward.verify([items[0][:2]], url=url)  # warm-up: first use loads the problem
    out["single"] = bench_single(url, items, a.single)
    out["batch"] = bench_batch(url, items[:a.batch])
    if not a.no_concurrent:
        out["concurrent"] = bench_concurrent(url, items[:a.batch])
    if not a.no_run:
        out["kverify_run"] = bench_kverify_run(a.kverify, items[:a.batch], a.compile_only)
    text = json.dumps(out, indent=2)
    print(text)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""phases: where a `kverify run` spent its time, per phase, from the evidence its database keeps
(make bench prints it after each throughput batch; standard library only).

    python3 tests/bench/phases.py DB [--wall SECONDS] [--workers N]

Phases, summed over the candidates (seconds and share of the GPU clients' time):
  worker load      module and problem loading in the worker (stage_ms.load_ms)
  buffers          buffer preparation of the checking runs (runs[].setup_ms)
  candidate        the candidate's checking runs (runs[].candidate_ms)
  reference        the reference's checking runs (runs[].reference_ms)
  check overhead   the rest of the checking stage: input fills, poison, checksums, guards, compares
  timed windows    the timed reps' event windows (timing_checks.timed_window_ms)
  timing checks    the rest of the timing stage: fresh inputs, the reference and the compare after
                   every rep, module reloads, L2 flushes
  sanitizer        compute-sanitizer runs (sanitizer.runs[].ms)
  IPC and client   the client's GPU time (client_ms.gpu) minus the worker's stages and sanitizer
And beside them: compile (CPU, parallel servers: compiles.duration_ms) and, given the batch's wall
time and GPU workers, the GPU clients' idle time (waiting for compiled candidates)."""
import argparse
import json
import sqlite3


def phases(db):
    c = sqlite3.connect(db)
    acc = {k: 0.0 for k in ("worker load", "buffers", "candidate", "reference", "check overhead",
                            "timed windows", "timing checks", "sanitizer", "IPC and client")}
    client = 0.0
    n = 0
    for (text,) in c.execute("SELECT evidence_json FROM v_latest_verification WHERE evidence_json IS NOT NULL"):
        try:
            ev = json.loads(text)
        except ValueError:
            continue
        st = ev.get("stage_ms") or {}
        runs = ev.get("runs") or []
        setup = sum(r.get("setup_ms", 0) for r in runs)
        cand = sum(r.get("candidate_ms", 0) for r in runs)
        ref = sum(r.get("reference_ms", 0) for r in runs)
        checks, timing = st.get("checks_ms", 0), st.get("timing_ms", 0)
        window = (ev.get("timing_checks") or {}).get("timed_window_ms", 0)
        san = sum(r.get("ms", 0) for r in (ev.get("sanitizer") or {}).get("runs", []))
        gpu = (ev.get("client_ms") or {}).get("gpu", 0)
        acc["worker load"] += st.get("load_ms", 0)
        acc["buffers"] += setup
        acc["candidate"] += cand
        acc["reference"] += ref
        acc["check overhead"] += max(0.0, checks - setup - cand - ref)
        acc["timed windows"] += window
        acc["timing checks"] += max(0.0, timing - window)
        acc["sanitizer"] += san
        if gpu:
            acc["IPC and client"] += max(0.0, gpu - st.get("load_ms", 0) - checks - timing - san)
        client += gpu
        n += 1
    compile_ms = c.execute("SELECT coalesce(sum(duration_ms), 0) FROM compiles").fetchone()[0]
    return acc, client, compile_ms, n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--wall", type=float, default=0, help="the batch's wall time, seconds")
    ap.add_argument("--workers", type=int, default=1, help="GPU workers of the batch")
    a = ap.parse_args()
    acc, client, compile_ms, n = phases(a.db)
    total = sum(acc.values()) or 1.0
    print("per-phase time over %d verifications (GPU clients' time %.1f s):" % (n, client / 1e3))
    for k, v in acc.items():
        print("  %-16s %8.1f s  %5.1f%%" % (k, v / 1e3, 100.0 * v / total))
    print("  %-16s %8.1f s  (CPU, parallel compile servers; overlaps the GPU)" % ("compile", compile_ms / 1e3))
    if a.wall > 0:
        idle = max(0.0, a.wall * a.workers - client / 1e3)
        print("  %-16s %8.1f s  (GPU clients idle: waiting for compiled candidates)" % ("compile wait", idle))


if __name__ == "__main__":
    main()

"""phases: where a `kverify run` spent its time, per phase, from the evidence its database keeps
(make bench prints it after each throughput batch; standard library only).

    python3 tests/bench/phases.py DB [--wall SECONDS] [--workers N]

Phases, summed over the candidates (seconds and share of the GPU clients' time), from the
worker's stage_ms.phases (verify/worker/worker_phases.c), checking runs and timed reps together:
  worker load          manifest and modules          buffers          mappings, guards, scratch
  input setup          seeded inputs, their sums     poison/reload/L2 before every execution
  candidate            the checking runs             CUPTI records    kernel records collected
  guards+input sums    after every execution         reference        the reference's runs
  compare/fingerprint  compares, output sums         timed windows    the timed reps' windows
  freed-memory clear wait  before a timing sample, until the driver's clear of released memory
                       should be over (worker_gpu.c wk_scrub_wait)
  worker other         the rest of the worker's stages
  worker release       after the stages: buffers and modules freed (stage_ms.job_ms minus stages)
  warm-up              an idle GPU's clocks brought back before the job (stage_ms.warmup_ms)
  sanitizer            the client's whole sanitizer check (client_ms.sanitizer; older evidence:
                       its runs, sanitizer.runs[].ms)
  IPC and client       the client's GPU time (client_ms.gpu) minus the worker's job and sanitizer,
                       split where both sides stamp it (stage_ms.ipc_at, client_ms.ipc_at): job to
                       worker, worker before/after the job, result to client, result filled in,
                       client after (the rest of the client's hold)
And, given the wall time, the GPU clients' idle time ("compile wait"), split by the clients'
stamps into the time before each GPU's first job (start-up: workers, compile servers, the first
compiles), between its jobs and after its last (the batch's tail).
(An older worker's evidence, without phases, gives the checking runs' times and timed windows,
the rest under "worker other".)
And beside them: compile (CPU, parallel servers: compiles.duration_ms) and, given the batch's wall
time and GPU workers, the GPU clients' idle time (waiting for compiled candidates).
With several GPUs (client_ms.slot), each GPU client's count and held time, against the wall.
Then, from stage_ms.families (workers since issue 34's cost work), the worker's phases per family
of runs: default seeds, alt, hidden draws, strat(ified) and bound(ary) sets (the capacity sets are
the last boundary sets), the value classes (large, special) and the timing, with each family's
run count, so that what a family of checks costs can be read off one batch."""
import argparse
import json
import sqlite3


WORKER_PHASES = ("load", "buffers", "inputs", "prepare", "candidate", "cupti", "safety",
                 "reference", "compare", "timed_window", "scrub_wait")
LABELS = {"load": "worker load", "buffers": "buffers", "inputs": "input setup",
          "prepare": "poison/reload/L2", "candidate": "candidate", "cupti": "CUPTI records",
          "safety": "guards+input sums", "reference": "reference", "compare": "compare/fingerprint",
          "timed_window": "timed windows", "scrub_wait": "freed-memory clear wait",
          "other": "worker other"}


def from_phases(acc, st):
    """A worker that reports stage_ms.phases: every phase measured."""
    ph = st["phases"]
    for k in WORKER_PHASES:
        acc[LABELS[k]] += ph.get(k, 0)
    worker = st.get("load_ms", 0) + st.get("checks_ms", 0) + st.get("timing_ms", 0)
    acc[LABELS["other"]] += max(0.0, worker - sum(ph.get(k, 0) for k in WORKER_PHASES))


def from_stages(acc, st, runs, ev):
    """An older worker's evidence: the checking runs' times and the timed windows alone."""
    setup = sum(r.get("setup_ms", 0) for r in runs)
    cand = sum(r.get("candidate_ms", 0) for r in runs)
    ref = sum(r.get("reference_ms", 0) for r in runs)
    checks, timing = st.get("checks_ms", 0), st.get("timing_ms", 0)
    window = (ev.get("timing") or ev.get("timing_checks") or {}).get("timed_window_ms", 0)
    acc[LABELS["load"]] += st.get("load_ms", 0)
    acc[LABELS["buffers"]] += setup
    acc[LABELS["candidate"]] += cand
    acc[LABELS["reference"]] += ref
    acc[LABELS["timed_window"]] += window
    acc[LABELS["other"]] += max(0.0, checks - setup - cand - ref) + max(0.0, timing - window)


def add_families(fam, ev):
    """Sums stage_ms.families (family -> phase -> ms) and counts each family's runs."""
    for name, ph in ((ev.get("stage_ms") or {}).get("families") or {}).items():
        f = fam.setdefault(name, {"runs": 0, "ms": {k: 0.0 for k in WORKER_PHASES}})
        for k in WORKER_PHASES:
            f["ms"][k] += ph.get(k, 0)
    for r in ev.get("runs") or []:
        name = "".join(ch for ch in r.get("dims", "") if not ch.isdigit())
        if name in fam:
            fam[name]["runs"] += 1


def print_families(fam):
    if not fam:
        return
    print("per family of runs (seconds; runs counted from the evidence):")
    print("  %-9s %6s %8s %8s %8s %8s %8s %8s %8s" % ("family", "runs", "buffers", "inputs", "prepare",
                                                    "cand", "safety", "ref", "compare"))
    for name, f in sorted(fam.items(), key=lambda x: -sum(x[1]["ms"].values())):
        m = f["ms"]
        print("  %-9s %6d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f" % (
            name, f["runs"], m["buffers"] / 1e3, m["inputs"] / 1e3, m["prepare"] / 1e3,
            (m["candidate"] + m["cupti"] + m["timed_window"]) / 1e3, m["safety"] / 1e3,
            m["reference"] / 1e3, m["compare"] / 1e3))


IPC_PARTS = ("job to worker", "worker before job", "worker after job", "result to client",
             "result filled in", "client after")


def add_ipc_split(ipc, st, cms, worker, san, gpu):
    """IPC and client, split by the monotonic stamps both sides keep (stage_ms.ipc_at: job read,
    job begun, result sent; client_ms.ipc_at: job sent, result read, result filled in)."""
    w, c = st.get("ipc_at"), cms.get("ipc_at")
    if ipc is None or not (isinstance(w, list) and isinstance(c, list) and len(w) == 3 and len(c) == 3):
        return
    job = st.get("job_ms", 0)
    parts = (w[0] - c[0], w[1] - w[0] - st.get("warmup_ms", 0), w[2] - w[1] - job, c[1] - w[2],
             c[2] - c[1], gpu - (c[2] - c[0]) - san)
    for k, v in zip(IPC_PARTS, parts):
        ipc[k] = ipc.get(k, 0.0) + max(0.0, v)


def idle_split(spans, wall_s, workers):
    """The GPU clients' idle time (the wall times the workers, minus the time they held a GPU),
    split by the client's stamps (client_ms.ipc_at[0], when a job was sent, and client_ms.gpu):
    before each GPU's first job, between its jobs, after its last. The batch is taken to end
    when its last job does; a GPU that held no job was idle the whole wall. None without stamps."""
    if not spans or wall_s <= 0:
        return None
    end = max(j[1] for v in spans.values() for j in v)
    start = end - wall_s * 1e3
    before = between = after = 0.0
    for slot in range(max(workers, len(spans))):
        v = sorted(spans.get(slot, []))
        if not v:
            before += wall_s * 1e3
            continue
        before += max(0.0, v[0][0] - start)
        after += max(0.0, end - max(j[1] for j in v))
        last = v[0][1]
        for j in v[1:]:
            between += max(0.0, j[0] - last)
            last = max(last, j[1])
    return before, between, after


def first_jobs(spans, wall_s):
    """Each GPU's first job, in seconds after the batch's start (taken as in idle_split): when
    its worker had introduced itself, when the job's candidate and reference were compiled, and
    when the job was sent, with what the worker's start-up spent opening the device and starting
    CUPTI, and of the opening its driver load and cuInit and its context (client_ms.worker_init;
    0 when absent); and when the batch's first compile finished.
    None without the stamps (client_ms.worker_up_at and compiled_at, since issue 37's start-up
    split)."""
    if not spans or wall_s <= 0:
        return None
    end = max(j[1] for v in spans.values() for j in v)
    start = end - wall_s * 1e3
    rows = []
    for slot in sorted(spans):
        job = min(spans[slot])
        sent, _, compiled, up = job[:4]
        if compiled <= 0 or up <= 0:
            return None
        opened, cupti = job[4:6] if len(job) >= 6 else (0, 0)
        cuinit, context = job[6:8] if len(job) >= 8 else (0, 0)
        rows.append((slot, (up - start) / 1e3, (compiled - start) / 1e3, (sent - start) / 1e3,
                     opened / 1e3, cupti / 1e3, cuinit / 1e3, context / 1e3))
    first_compile = min(j[2] for v in spans.values() for j in v if j[2] > 0)
    return rows, (first_compile - start) / 1e3


def phases(db, fam=None, per_gpu=None, ipc=None, spans=None):
    c = sqlite3.connect(db)
    acc = {v: 0.0 for v in LABELS.values()}
    acc["worker release"] = 0.0
    acc["warm-up"] = 0.0
    acc["sanitizer"] = 0.0
    acc["IPC and client"] = 0.0
    client = 0.0
    n = 0
    for (text,) in c.execute("SELECT evidence_json FROM v_latest_verification WHERE evidence_json IS NOT NULL"):
        try:
            ev = json.loads(text)
        except ValueError:
            continue
        st = ev.get("stage_ms") or {}
        if fam is not None:
            add_families(fam, ev)
        if isinstance(st.get("phases"), dict):
            from_phases(acc, st)
        else:
            from_stages(acc, st, ev.get("runs") or [], ev)
        worker = st.get("load_ms", 0) + st.get("checks_ms", 0) + st.get("timing_ms", 0)
        if "job_ms" in st:  # the worker's release of the job's buffers and modules, and the rest
            acc["worker release"] += max(0.0, st["job_ms"] - worker)
            worker = st["job_ms"]
        acc["warm-up"] += st.get("warmup_ms", 0)  # clocks back up after an idle GPU
        worker += st.get("warmup_ms", 0)
        cms = ev.get("client_ms") or {}
        san = sum(r.get("ms", 0) for r in (ev.get("sanitizer") or {}).get("runs", []))
        if "sanitizer" in cms:  # the whole check: its runs and the sanitizer process's own work
            san = cms["sanitizer"]
        gpu = cms.get("gpu", 0)
        if per_gpu is not None and "slot" in cms:  # which GPU client held it (several GPUs)
            g = per_gpu.setdefault(cms["slot"], [0, 0.0])
            g[0] += 1
            g[1] += gpu
        c_at = cms.get("ipc_at")
        if spans is not None and gpu and isinstance(c_at, list) and len(c_at) == 3:
            init = cms.get("worker_init") or {}
            spans.setdefault(cms.get("slot", 0), []).append(
                (c_at[0], c_at[0] + gpu, cms.get("compiled_at", 0), cms.get("worker_up_at", 0),
                 init.get("gpu_open", 0), init.get("cupti", 0), init.get("cuinit", 0),
                 init.get("context", 0)))
        acc["sanitizer"] += san
        if gpu:
            acc["IPC and client"] += max(0.0, gpu - worker - san)
            add_ipc_split(ipc, st, cms, worker, san, gpu)
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
    fam, per_gpu, ipc, spans = {}, {}, {}, {}
    acc, client, compile_ms, n = phases(a.db, fam, per_gpu, ipc, spans)
    total = sum(acc.values()) or 1.0
    print("per-phase time over %d verifications (GPU clients' time %.1f s):" % (n, client / 1e3))
    for k, v in acc.items():
        print("  %-20s %8.1f s  %5.1f%%" % (k, v / 1e3, 100.0 * v / total))
    print("  %-20s %8.1f s  (CPU, parallel compile servers; overlaps the GPU)" % ("compile", compile_ms / 1e3))
    if a.wall > 0:
        idle = max(0.0, a.wall * a.workers - client / 1e3)
        print("  %-20s %8.1f s  (GPU clients idle: waiting for compiled candidates)" % ("compile wait", idle))
        split = idle_split(spans, a.wall, a.workers)
        if split:
            print("  compile wait, split: before each GPU's first job %.1f s, between jobs %.1f s, "
                  "after its last job %.1f s" % tuple(x / 1e3 for x in split))
        firsts = first_jobs(spans, a.wall)
        if firsts:
            print("  start-up (s after the batch's start): first compile done %.1f; per GPU, worker up / "
                  "first job's candidate and reference compiled / job sent (the worker's device open "
                  "[of it cuInit, context], CUPTI start): %s" % (
                      firsts[1], ", ".join("GPU %d %.1f/%.1f/%.1f (%.1f [%.1f, %.1f], %.1f)"
                                           % (r[:5] + r[6:8] + r[5:6]) for r in firsts[0])))
    if ipc:
        print("  IPC and client, split: " + ", ".join("%s %.2f s" % (k, ipc.get(k, 0.0) / 1e3) for k in IPC_PARTS))
    if len(per_gpu) > 1:
        print_per_gpu(per_gpu, a.wall)
    print_families(fam)


def print_per_gpu(per_gpu, wall):
    """Each GPU client's verifications and the time it held its GPU (busy share of the wall)."""
    print("per GPU client (slot: verifications, seconds held%s):" % (", share of the wall" if wall > 0 else ""))
    for slot in sorted(per_gpu):
        n, ms = per_gpu[slot]
        share = "  %5.1f%%" % (100.0 * ms / 1e3 / wall) if wall > 0 else ""
        print("  GPU %-3s %5d %8.1f s%s" % (slot, n, ms / 1e3, share))


if __name__ == "__main__":
    main()

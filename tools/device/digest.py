"""digest: one line per verification of a make-bench database, in the order the batch ran them,
for reading a device call's cost figures after the machine is gone (tools/device/cost_ab.sh;
standard library only).

    python3 tools/device/digest.py DB [LABEL]

Each line: LABEL, the verification's id, problem, verdict, the default runs' candidate ms and SM
clocks (the timing's first samples), extra timed reps (/-N: N varied or structured samples
dropped), the worker's job ms, the client's GPU ms,
the IPC split (job to worker, worker before/after the job, result to client, fill-in) in ms
where both sides stamped it, the run count, the GPU slot and, for a job that started its
worker, the worker's start-up ms (client_ms.worker_start)."""
import json
import sqlite3
import sys


def ipc_split(st, cms):
    w, c = st.get("ipc_at"), cms.get("ipc_at")
    if not (isinstance(w, list) and isinstance(c, list) and len(w) == 3 and len(c) == 3):
        return "-"
    job = st.get("job_ms", 0)
    parts = (w[0] - c[0], w[1] - w[0] - st.get("warmup_ms", 0), w[2] - w[1] - job, c[1] - w[2], c[2] - c[1])
    return "/".join("%.1f" % v for v in parts)


def main():
    db, label = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "-"
    c = sqlite3.connect(db)
    q = ("SELECT v.id, c.problem_id, v.verdict, v.evidence_json FROM verifications v "
         "JOIN candidates c ON c.id = v.candidate_id ORDER BY v.id")
    for vid, prob, verdict, text in c.execute(q):
        try:
            ev = json.loads(text or "{}")
        except ValueError:
            ev = {}
        runs = [r for r in ev.get("runs") or [] if r.get("dims") == "default"]
        ms = ",".join("%.3f" % r.get("candidate_ms", 0) for r in runs)
        clk = ",".join("%.0f" % r.get("sm_clock_mhz", 0) for r in runs)
        timing = ev.get("timing") or ev.get("timing_checks") or {}
        st, cms = ev.get("stage_ms") or {}, ev.get("client_ms") or {}
        print("\t".join(str(x) for x in (label, vid, prob.split("/")[-1][:28], verdict, ms, clk,
                                         "%s%s" % (timing.get("extra_reps", "-"),
                                                   "/-%d" % timing["dropped_varied"] if timing.get("dropped_varied") else ""),
                                         "%.0f" % st.get("job_ms", 0),
                                         "%.0f" % cms.get("gpu", 0), "%.1f" % st.get("warmup_ms", 0),
                                         ipc_split(st, cms), len(ev.get("runs") or []),
                                         cms.get("slot", "-"), "%.0f" % cms.get("worker_start", 0))))


if __name__ == "__main__":
    main()

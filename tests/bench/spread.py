"""spread: the timing spread of one kernel over independent verifications (make bench's spread
part; standard library only). Reads `kverify check --json` outputs, one per line on stdin, and
prints the median of the timed medians, (max-min)/median and stdev/mean over all of them, the
same over the verifications timed at the most common SM clock (the clock each verification
measured in-kernel before its timed runs, timing_checks.sm_clock_mhz; readings within 0.1% of
each other count as one clock), and the medians with their clocks in order.

    for i in ...; do kverify check --problem P K.cu --json | tr -d '\\n'; echo; done | python3 spread.py LABEL
"""
import json
import statistics
import sys


def spread(values):
    m = statistics.median(values)
    return m, 100 * (max(values) - min(values)) / m, 100 * statistics.pstdev(values) / statistics.mean(values)


def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "kernel"
    runs = []
    for line in sys.stdin:
        if not line.strip():
            continue
        d = json.loads(line)
        clock = d.get("evidence", {}).get("timing_checks", {}).get("sm_clock_mhz", 0) or 0
        runs.append((d["timing"]["median_ms"], clock))
    if not runs:
        print("timing spread %s: no verification was timed" % label)
        return 1
    m, rng, sd = spread([t for t, _ in runs])
    print("timing spread %s: median %.4f ms over %d verifications, (max-min)/median %.3f%%, stdev/mean %.3f%%"
          % (label, m, len(runs), rng, sd))
    clocks = [c for _, c in runs if c > 0]
    if clocks:
        groups = {}
        for c in clocks:
            key = next((k for k in groups if abs(c - k) <= 0.001 * k), c)
            groups.setdefault(key, []).append(c)
        common = max(groups, key=lambda k: len(groups[k]))
        same = [t for t, c in runs if c > 0 and abs(c - common) <= 0.001 * common]
        if len(same) >= 2:
            m2, rng2, sd2 = spread(same)
            print("  at the most common SM clock (%.0f MHz, %d of %d verifications): (max-min)/median %.3f%%, stdev/mean %.3f%%"
                  % (statistics.median(groups[common]), len(same), len(runs), rng2, sd2))
        print("  SM clocks seen (MHz): %s" % ", ".join("%.0f x%d" % (statistics.median(v), len(v)) for v in groups.values()))
    print("  in order (ms @ MHz): %s" % " ".join("%.4f@%.0f" % (t, c) for t, c in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

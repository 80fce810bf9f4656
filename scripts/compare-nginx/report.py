#!/usr/bin/env python3
"""Report of scripts/compare-nginx.sh: reads its results file, one wrk run a line:

  ROUND SCENARIO TARGET REQ/S BYTES/S P50_MS P99_MS CPU_US/REQ LOAD1 CONNECT READ WRITE TIMEOUT NON2XX REQUESTS

and prints a markdown table of medians over the rounds with ratios against nginx with
tcp_nopush off, then head/base ratios when two coffer builds ran, and tenant/head ratios
when the same build also ran with tenants (--tenants: its requests routed by host).

  report.py RESULTS ROUNDS DURATION

A target with any socket error, timeout or non-2xx response in any round, or a round with
no completed response, is INVALID: its medians are printed, its ratios are not (nor are
ratios against an INVALID nginx). wrk counts a timeout when a response completes later
than --timeout (it then closes the connection); the script's 2 s for 100 KB files and 30 s
for 5 MB and 45 MB files make any timeout a sign of a stalled server, not of a slow file.
"""
import statistics
import sys

BASE = "nginx-nopush-off"
FIELDS = ("rps", "bps", "p50", "p99", "cpu", "load")


def read(path):
    """Runs grouped by (scenario, target), in file order."""
    runs = {}
    for line in open(path):
        f = line.split()
        if len(f) != 15:
            continue
        _, scen, target = f[:3]
        nums = [float(x) for x in f[3:9]]
        errs = [int(x) for x in f[9:14]]
        runs.setdefault((scen, target), []).append(dict(zip(FIELDS, nums), errs=errs, reqs=int(f[14])))
    return runs


def med(rs, k):
    return statistics.median(r[k] for r in rs)


def problems(rs):
    """'' for a valid target, else what made it INVALID, summed over its rounds."""
    c, r, w, t, n = (sum(x["errs"][i] for x in rs) for i in range(5))
    empty = sum(1 for x in rs if x["reqs"] == 0)
    bad = [f"{v} {k}" for k, v in (("timeouts", t), ("connect errors", c), ("read errors", r),
                                   ("write errors", w), ("non-2xx", n), ("runs with no response", empty)) if v]
    return ", ".join(bad)


def ratio(rs, base, k):
    if problems(rs) or base is None or problems(base) or med(base, k) == 0:
        return "INVALID" if base is not None else "-"
    return f"{med(rs, k) / med(base, k):.2f}x"


def rounds(rs, base):
    """req/s against nginx in each round (the runs of one round are adjacent)."""
    if base is None or problems(rs) or problems(base):
        return "-"
    return " ".join(f"{x['rps'] / y['rps']:.2f}" for x, y in zip(rs, base) if y["rps"] > 0)


def table(runs):
    print("| scenario | server | req/s | MB/s | p50 ms | p99 ms | CPU µs/req | load (1 min) "
          "| req/s vs nginx | each round | p99 vs nginx | CPU/req vs nginx | valid |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for (scen, target), rs in runs.items():
        base = runs.get((scen, BASE))
        bad = problems(rs)
        print(f"| {scen} | {target} | {med(rs, 'rps'):,.0f} | {med(rs, 'bps') / 1e6:,.1f} | "
              f"{med(rs, 'p50'):,.2f} | {med(rs, 'p99'):,.2f} | {med(rs, 'cpu'):.1f} | {med(rs, 'load'):.2f} | "
              f"{ratio(rs, base, 'rps')} | {rounds(rs, base)} | {ratio(rs, base, 'p99')} | {ratio(rs, base, 'cpu')} | "
              f"{'INVALID (' + bad + ')' if bad else 'valid'} |")


def pairs(runs, a, b):
    """Prints build a against build b (targets named NAME-a and NAME-b), per round and
    the median of those ratios."""
    tops = [k for k in runs if k[1].endswith("-" + a) and (k[0], k[1][:-len(a)] + b) in runs]
    if not tops:
        return
    print(f"\n{a} vs {b}, per round (adjacent runs of one round), then the median of those ratios:")
    for scen, h in tops:
        o = h[:-len(a)] + b
        hr, br = runs[(scen, h)], runs.get((scen, o), [])
        rps = [x["rps"] / y["rps"] for x, y in zip(hr, br) if y["rps"] > 0]
        cpu = [x["cpu"] / y["cpu"] for x, y in zip(hr, br) if y["cpu"] > 0]
        p99 = [x["p99"] / y["p99"] for x, y in zip(hr, br) if y["p99"] > 0]
        if not rps or not cpu:
            continue
        note = "" if not (problems(hr) or problems(br)) else " (INVALID: errors in a run)"
        print(f"  {scen} {h[:-len(a) - 1]}: req/s {a}/{b} {' '.join(f'{r:.3f}' for r in rps)} -> median "
              f"{statistics.median(rps):.3f}; CPU/req {a}/{b} median {statistics.median(cpu):.3f}; "
              f"p99 {a}/{b} median {statistics.median(p99):.3f}{note}")


def main(path, rounds, dur):
    runs = read(path)
    print(f"\nMedians of {rounds} alternating rounds of {dur} each (wrk -t2), this machine; ratios against "
          f"{BASE} (nginx with sendfile, open_file_cache, tcp_nopush off):\n")
    table(runs)
    pairs(runs, "head", "base")
    pairs(runs, "tenant", "head")
    loads = [r["load"] for rs in runs.values() for r in rs]
    print(f"\n1-min load average after each run: min {min(loads):.2f}, median {statistics.median(loads):.2f}, "
          f"max {max(loads):.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])

#!/usr/bin/env python3
"""Lines and the markdown report of scripts/compare-sites.sh.

  report.py line RUN.json PHASE ROUND FRONT ORIGIN_REQS ORIGIN_BYTES CACHE LOAD1
      one result line from `coffer bench --json` and the upstream's counts
  report.py kinds RUN.json PHASE ROUND FRONT
      a note of the run's errors by kind and non-2xx statuses, if it had any
  report.py table RESULTS STAGES ROUNDS NOTES
      the cold pass, the medians of the warm rounds, the ratios coffer/nginx and
      (with a front "base", BASE=REV) coffer/base
"""
import json
import statistics
import sys

FIELDS = ["phase", "round", "front", "bytes_per_s", "rps", "p50_ms", "p95_ms", "p99_ms", "errors",
          "timeouts", "requests", "bytes", "peak_rss_mb", "cpu_s", "cpu_us_req", "hit_req", "hit_bytes",
          "cache", "load1", "client_cpu_s"]


def line(path, phase, rnd, front, origin_reqs, origin_bytes, cache, load):
    run = json.load(open(path))["runs"][0]
    srv = run.get("server") or {}
    reqs, nbytes = run["requests"], run["bytes"]
    cpu = srv.get("cpu_seconds", float("nan"))
    vals = [phase, rnd, front, "%.0f" % run["bytes_per_s"], "%.1f" % run["rps"],
            "%.2f" % run["latency"]["p50_ms"], "%.2f" % run["latency"]["p95_ms"], "%.2f" % run["latency"]["p99_ms"],
            run["errors"], run["errors_by_kind"].get("timeout", 0), reqs, nbytes,
            "%.1f" % (srv.get("peak_rss_bytes", float("nan")) / 1e6), "%.2f" % cpu,
            "%.1f" % (cpu / reqs * 1e6 if reqs else float("nan")),
            "%.4f" % (1 - int(origin_reqs) / reqs if reqs else float("nan")),
            "%.4f" % (1 - int(origin_bytes) / nbytes if nbytes else float("nan")),
            cache or "-", load, "%.2f" % run.get("client_cpu_seconds", 0)]
    print(" ".join(str(v) for v in vals))


def kinds(path, phase, rnd, front):
    run = json.load(open(path))["runs"][0]
    if run["errors"]:
        st = {k: v for k, v in run["status"].items() if not k.startswith("2")}
        print("%s %s %s: %d errors: %s; statuses %s" % (phase, rnd, front, run["errors"],
              ", ".join("%s %d" % kv for kv in sorted(run["errors_by_kind"].items())), st or "all 2xx"))


def read(path):
    rows = []
    for ln in open(path):
        parts = ln.split()
        if len(parts) == len(FIELDS):
            rows.append(dict(zip(FIELDS, parts)))
    return rows


COLS = [("bytes/s", "bytes_per_s", lambda v: "%.1f MB/s" % (v / 1e6)), ("req/s", "rps", "%.0f"),
        ("p50 ms", "p50_ms", "%.1f"), ("p95 ms", "p95_ms", "%.1f"), ("p99 ms", "p99_ms", "%.1f"),
        ("errors", "errors", "%.0f"), ("timeouts", "timeouts", "%.0f"), ("GB sent", "bytes", lambda v: "%.2f" % (v / 1e9)),
        ("peak RSS MB", "peak_rss_mb", "%.1f"), ("CPU µs/req", "cpu_us_req", "%.0f"),
        ("CPU s/GB", None, "%.2f"), ("hit ratio (req)", "hit_req", "%.3f"), ("hit ratio (bytes)", "hit_bytes", "%.3f"),
        ("load1", "load1", "%.2f")]


def value(r, key):
    if key is None:  # CPU seconds per GB sent
        return float(r["cpu_s"]) / (float(r["bytes"]) / 1e9) if float(r["bytes"]) else float("nan")
    return float(r[key])


def fmt(f, v):
    return f(v) if callable(f) else f % v


def summary(rows):
    """One row of medians over rows (one run gives itself)."""
    return {c: statistics.median(value(r, k) for r in rows) for c, k, _ in COLS}


def table(path, stages, rounds, notes):
    rows = read(path)
    fronts = sorted({r["front"] for r in rows}, key=lambda f: (f != "nginx", f))
    out = ["spa_site, stages `%s`, virtual users up to %s; cold pass then %s warm rounds alternating "
           "(medians); coffer audit log on, nginx access log on." % (stages, max(int(s.split("@")[0]) for s in stages.split(",")), rounds), ""]
    out.append("| phase | front | runs | " + " | ".join(c for c, _, _ in COLS) + " |")
    out.append("|" + "---|" * (len(COLS) + 3))
    meds = {}
    for phase in ("cold", "warm"):
        for f in fronts:
            rs = [r for r in rows if r["phase"] == phase and r["front"] == f]
            if not rs:
                continue
            meds[phase, f] = m = summary(rs)
            out.append("| %s | %s | %d | " % (phase, f, len(rs)) + " | ".join(fmt(fm, m[c]) for c, _, fm in COLS) + " |")
    out.append("")
    for phase in ("cold", "warm"):
        for f in fronts:
            a, b = meds.get((phase, "nginx")), meds.get((phase, f))
            if f == "nginx" or not a or not b:
                continue
            ratio = lambda c: "%.2fx" % (b[c] / a[c]) if a[c] else "-"
            out.append("%s, %s/nginx: bytes/s %s (target >= 1.0), req/s %s, p99 %s (target <= 1.0), CPU/req %s, peak RSS %s "
                       "(%s %.1f MB; target <= 200 MB at 3,000 users); errors %s %d, nginx %d (target 0)"
                       % (phase, f, ratio("bytes/s"), ratio("req/s"), ratio("p99 ms"), ratio("CPU µs/req"), ratio("peak RSS MB"),
                          f, b["peak RSS MB"], f, b["errors"] + b["timeouts"], a["errors"] + a["timeouts"]))
    for phase in ("cold", "warm"):
        a, b = meds.get((phase, "base")), meds.get((phase, "coffer"))
        if not a or not b:
            continue
        ratio = lambda c: "%.2fx" % (b[c] / a[c]) if a[c] else "-"
        out.append("%s, coffer/base (this checkout against BASE): req/s %s (target >= 0.97), CPU/req %s (target <= 1.03), "
                   "bytes/s %s, p99 %s, peak RSS %s; errors coffer %d, base %d"
                   % (phase, ratio("req/s"), ratio("CPU µs/req"), ratio("bytes/s"), ratio("p99 ms"), ratio("peak RSS MB"),
                      b["errors"] + b["timeouts"], a["errors"] + a["timeouts"]))
    caches = [(r["phase"], r["round"], r["cache"]) for r in rows if r["front"] == "nginx"]
    if caches:
        out.append("")
        out.append("nginx $upstream_cache_status per run: " + "; ".join("%s %s: %s" % c for c in caches))
    try:
        out += [""] + [ln.rstrip() for ln in open(notes)]
    except OSError:
        pass
    print("\n".join(out))


if __name__ == "__main__":
    if sys.argv[1] == "line":
        line(*sys.argv[2:10])
    elif sys.argv[1] == "kinds":
        kinds(*sys.argv[2:6])
    else:
        table(*sys.argv[2:6])

#!/usr/bin/env python3
"""Prints the gocompare table: req/s, CPU per request and peak RSS of lokivl
and the Go proxy, per workload and cell, from run.sh's output folder."""
import glob
import json
import os
import sys


def bench_result(folder):
    """(req/s, requests, errors, cpu seconds from /metrics) of one loki-bench run."""
    files = sorted(glob.glob(os.path.join(folder, "bench-*.json")))
    if not files:
        return None
    records = json.load(open(files[-1]))
    if isinstance(records, dict):
        records = records.get("Records") or records.get("records") or []
    for r in records:
        if r.get("Target") == "proxy":
            o = r["Result"]["Overall"]
            cpu = (r.get("ResourceDelta") or {}).get("CPUSeconds") or 0.0
            return o["Throughput"], o["Count"], o["Errors"], cpu
    return None


def main(out):
    procs = {}
    path = os.path.join(out, "procstats.txt")
    if os.path.exists(path):
        for row in open(path):
            name, cell, w, hwm0, cpu0, hwm1, cpu1 = row.split()
            procs[(name, cell, w)] = (int(hwm1), float(cpu1) - float(cpu0))
    cells = ["off", "unique", "repeated"]
    workloads = ["small", "heavy", "long_range", "compute"]
    print("| workload | cell | lokivl req/s | Go req/s | lokivl/Go | lokivl ms CPU/req | Go ms CPU/req | lokivl peak RSS MiB | Go peak RSS MiB | errors (lokivl/Go) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for w in workloads:
        for c in cells:
            row = {}
            for name in ("lokivl", "go"):
                res = bench_result(os.path.join(out, f"{name}-{c}-{w}"))
                if res is None:
                    continue
                rps, count, errors, cpu = res
                hwm, pcpu = procs.get((name, c, w), (0, 0.0))
                # CPU per request: the process CPU that loki-bench scraped
                # from the proxy's /metrics around the timed run; without it,
                # /proc's count over the whole run (warm-up included, so an
                # upper bound).
                used = cpu if cpu > 0 else pcpu
                per_req = (used / count * 1000) if count else 0.0
                row[name] = (rps, per_req, hwm / 1024, errors)
            if len(row) < 2:
                continue
            l, g = row["lokivl"], row["go"]
            ratio = l[0] / g[0] if g[0] else float("inf")
            print(f"| {w} | {c} | {l[0]:.0f} | {g[0]:.0f} | {ratio:.2f} | {l[1]:.2f} | {g[1]:.2f} | {l[2]:.0f} | {g[2]:.0f} | {l[3]}/{g[3]} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/gocompare")

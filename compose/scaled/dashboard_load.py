#!/usr/bin/env python3
"""Load-run driver: a refreshing Grafana dashboard against lokivl replicas.

A Grafana dashboard on "the last 6 hours" with auto-refresh sends every
panel's query again on each refresh, for [now-6h, now] at the same step.
Behind a round-robin load balancer, consecutive panel requests land on
different lokivl replicas. This script does exactly that, without a load
balancer in the way: it sends the panel requests of each refresh to the
replicas in turn (request k goes to replica k mod N), so a panel's next
refresh usually reaches another replica than the last one.

It reports what the replicas cost VictoriaLogs: query calls counted by
VictoriaLogs itself (`vl_http_requests_total{path=~"/select/logsql/.*"}`
on its `/metrics`, before and after; on a cluster, point --vl-url at
vlselect), calls per dashboard request, and each replica's cache outcomes
per tier from its own `/metrics` (`lokivl_cache_requests_total`, and
`lokivl_shared_cache_operations_total` when the shared tier is on).

Standard library only. Two sub-commands:

  ingest  push Promtail-style logs (stream labels only) to VictoriaLogs'
          Loki push endpoint, covering the last --hours up to now;
  run     refresh the dashboard --refreshes times, every --interval
          seconds, and print Markdown tables for docs/benchmarks.md.

Example (loopback; see docs/benchmarks.md, "Shared cache tier"):

  python3 compose/scaled/dashboard_load.py ingest --push-url http://127.0.0.1:3190 --hours 7
  python3 compose/scaled/dashboard_load.py run \\
      --replica http://127.0.0.1:3101 --replica http://127.0.0.1:3102 \\
      --replica http://127.0.0.1:3103 --vl-url http://127.0.0.1:3190 \\
      --push-url http://127.0.0.1:3190 --refreshes 30 --interval 10 \\
      --label "local caches only"

The run stops by itself after --refreshes refreshes; every HTTP call has a
--timeout.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import random
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

NS = 1_000_000_000

# The dashboard: five panels of a "last 6 hours" Grafana dashboard, as the
# Loki datasource sends them. `kind` is the Loki route; `range` panels get
# start/end (and step for query_range) from the refresh.
DEFAULT_PANELS = [
    {
        "name": "logs",
        "path": "/loki/api/v1/query_range",
        "params": {"query": '{app="api"}', "limit": "100", "direction": "backward"},
    },
    {
        "name": "levels",
        "path": "/loki/api/v1/query_range",
        "params": {
            "query": 'sum by (level) (count_over_time({namespace="prod"}[1m]))',
            "limit": "1000",
        },
    },
    {
        "name": "timeouts",
        "path": "/loki/api/v1/query_range",
        "params": {
            "query": 'sum by (app) (rate({namespace="prod"} |= "timeout" [5m]))',
            "limit": "1000",
        },
    },
    {
        "name": "top_errors",
        "path": "/loki/api/v1/query_range",
        "params": {
            "query": 'topk(3, sum by (app) (count_over_time({level="error"}[5m])))',
            "limit": "1000",
        },
    },
    {
        "name": "app_values",
        "path": "/loki/api/v1/label/app/values",
        "params": {},
    },
]

# Promtail-style streams: every label is a stream label, the line is text.
APPS = ["api", "web", "worker"]
NAMESPACES = ["prod", "dev"]
LEVELS = ["info", "warn", "error"]
PATHS = ["/api/orders", "/api/users", "/healthz", "/login", "/api/cart"]
MESSAGES = [
    "request served",
    "upstream timeout after retry",
    "cache refreshed",
    "connection reset by peer",
    "slow query",
]


def die(msg: str) -> None:
    print(f"dashboard_load: {msg}", file=sys.stderr)
    sys.exit(2)


def http(method: str, url: str, body: bytes | None, headers: dict, timeout: float):
    """One HTTP call; returns (status, body bytes). Network errors raise."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


# ---------------------------------------------------------------- ingest


def make_line(rng: random.Random, level: str) -> str:
    msg = rng.choice(MESSAGES)
    status = 500 if level == "error" else rng.choice([200, 200, 200, 201, 404])
    return (
        f'level={level} method={rng.choice(["GET", "POST"])} path={rng.choice(PATHS)} '
        f'status={status} duration={rng.randint(1, 900)}ms msg="{msg}"'
    )


def streams_for(rng: random.Random, t0_ns: int, t1_ns: int, rate: float) -> dict:
    """Entries for [t0, t1) at `rate` per second over all streams, grouped by stream."""
    out: dict = {}
    n = max(0, int((t1_ns - t0_ns) / NS * rate))
    for _ in range(n):
        ts = rng.randrange(t0_ns, t1_ns) if t1_ns > t0_ns else t0_ns
        # Errors are rarer than info lines, as in real services.
        level = rng.choices(LEVELS, weights=[80, 15, 5])[0]
        labels = (rng.choice(APPS), rng.choice(NAMESPACES), level)
        out.setdefault(labels, []).append([str(ts), make_line(rng, level)])
    return out


def push(push_url: str, streams: dict, org_id: str | None, timeout: float) -> int:
    body = {
        "streams": [
            {
                "stream": {"app": app, "namespace": ns, "level": lvl, "job": "promtail"},
                "values": sorted(values),
            }
            for (app, ns, lvl), values in sorted(streams.items())
        ]
    }
    headers = {"Content-Type": "application/json"}
    if org_id:
        headers["X-Scope-OrgID"] = org_id
    url = push_url.rstrip("/") + "/insert/loki/api/v1/push"
    status, answer = http("POST", url, json.dumps(body).encode(), headers, timeout)
    if status // 100 != 2:
        die(f"push to {url} answered {status}: {answer[:300]!r}")
    return sum(len(v) for v in streams.values())


def cmd_ingest(a) -> None:
    rng = random.Random(a.seed)
    now = time.time_ns()
    start = now - int(a.hours * 3600 * NS)
    slice_ns = 10 * 60 * NS
    total = 0
    t = start
    while t < now:
        t1 = min(t + slice_ns, now)
        total += push(a.push_url, streams_for(rng, t, t1, a.rate), a.org_id, a.timeout)
        t = t1
    print(f"ingested {total} entries over {a.hours} h up to now into {a.push_url}")


# ---------------------------------------------------------------- metrics


SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def scrape(url: str, timeout: float) -> list:
    """Prometheus text → [(name, {label: value}, float)]."""
    status, body = http("GET", url.rstrip("/") + "/metrics", None, {}, timeout)
    if status != 200:
        die(f"{url}/metrics answered {status}")
    out = []
    for line in body.decode("utf-8", "replace").splitlines():
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            continue
        labels = dict(LABEL.findall(m.group(2) or ""))
        try:
            out.append((m.group(1), labels, float(m.group(3))))
        except ValueError:
            continue
    return out


def total(samples: list, name: str, **match) -> float:
    """Sum of `name` samples whose labels match (a value may be a callable)."""
    s = 0.0
    for n, labels, v in samples:
        if n != name:
            continue
        ok = True
        for k, want in match.items():
            got = labels.get(k)
            if callable(want):
                ok = got is not None and want(got)
            else:
                ok = got == want
            if not ok:
                break
        if ok:
            s += v
    return s


def is_query_path(path: str) -> bool:
    return path.startswith("/select/logsql/") and path != "/select/logsql/tail"


def vl_select_calls(samples: list) -> dict:
    """VictoriaLogs' own count of `/select/logsql/*` requests, by path."""
    out: dict = {}
    for n, labels, v in samples:
        path = labels.get("path", "")
        if n == "vl_http_requests_total" and is_query_path(path):
            out[path] = out.get(path, 0.0) + v
    return out


CACHE_OUTCOMES = ["hit", "shared_hit", "miss", "coalesced", "uncacheable"]
SHARED_OUTCOMES = [
    "hit", "miss", "stored", "error", "timeout", "skipped", "incompatible", "too_large",
]


def replica_counters(samples: list) -> dict:
    c = {
        f"cache_{o}": total(samples, "lokivl_cache_requests_total", outcome=o)
        for o in CACHE_OUTCOMES
    }
    for o in SHARED_OUTCOMES:
        c[f"shared_{o}"] = total(samples, "lokivl_shared_cache_operations_total", outcome=o)
    c["backend_calls"] = total(
        samples, "lokivl_backend_requests_total", endpoint=lambda e: e not in ("health", "push")
    )
    c["has_shared"] = any(n == "lokivl_shared_cache_operations_total" for n, _, _ in samples)
    return c


# ---------------------------------------------------------------- run


def load_panels(path: str | None) -> list:
    if not path:
        return DEFAULT_PANELS
    with open(path, encoding="utf-8") as f:
        panels = json.load(f)
    if not isinstance(panels, list) or not all(
        isinstance(p, dict) and "path" in p for p in panels
    ):
        die(f"{path}: expected a JSON list of {{name, path, params}}")
    return panels


def panel_url(replica: str, panel: dict, start_ns: int, end_ns: int, step: str) -> str:
    params = dict(panel.get("params", {}))
    params["start"] = str(start_ns)
    params["end"] = str(end_ns)
    if panel["path"].endswith("/query_range"):
        params.setdefault("step", step)
    return replica.rstrip("/") + panel["path"] + "?" + urllib.parse.urlencode(params)


def pct(n: float, d: float) -> str:
    return f"{100.0 * n / d:.1f} %" if d else "n/a"


def quantile(xs: list, q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def cmd_run(a) -> None:
    replicas = a.replica
    panels = load_panels(a.dashboard)
    headers = {"X-Scope-OrgID": a.org_id} if a.org_id else {}
    for r in replicas:
        status, _ = http("GET", r.rstrip("/") + "/ready", None, {}, a.timeout)
        if status != 200:
            die(f"{r}/ready answered {status}")
    rng = random.Random(a.seed + 1)
    vl_before = vl_select_calls(scrape(a.vl_url, a.timeout))
    rep_before = [replica_counters(scrape(r, a.timeout)) for r in replicas]
    range_ns = int(a.range_hours * 3600 * NS)

    lat: list = []
    errors: list = []
    sent = 0
    rr = 0
    pushed = 0
    last_push = time.time_ns()
    began = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(panels)) as pool:
        for i in range(a.refreshes):
            tick = began + i * a.interval
            delay = tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            now = time.time_ns()
            if a.push_url and a.live_rate > 0:
                pushed += push(
                    a.push_url, streams_for(rng, last_push, now, a.live_rate), a.org_id, a.timeout
                )
                last_push = now
            # Grafana sends [now-6h, now] in nanoseconds, the same for every panel.
            end = time.time_ns()
            start = end - range_ns
            jobs = []
            for p in panels:
                url = panel_url(replicas[rr % len(replicas)], p, start, end, a.step)
                rr += 1
                jobs.append((p["name"], pool.submit(timed_get, url, headers, a.timeout)))
            for name, fut in jobs:
                sent += 1
                status, secs, body = fut.result()
                lat.append(secs)
                if status != 200:
                    errors.append(f"{name}: {status} {body[:200]!r}")
    elapsed = time.monotonic() - began
    # VictoriaLogs counts a request when it ends; the answers are all in.
    vl_after = vl_select_calls(scrape(a.vl_url, a.timeout))
    rep_after = [replica_counters(scrape(r, a.timeout)) for r in replicas]
    vl_calls = {p: vl_after[p] - vl_before.get(p, 0.0) for p in vl_after}
    report(a, replicas, panels, sent, errors, lat, elapsed, vl_calls,
           rep_before, rep_after, pushed)


def timed_get(url: str, headers: dict, timeout: float):
    t0 = time.monotonic()
    try:
        status, body = http("GET", url, None, headers, timeout)
    except (urllib.error.URLError, OSError) as e:
        status, body = 0, str(e).encode()
    return status, time.monotonic() - t0, body


def report(a, replicas, panels, sent, errors, lat, elapsed, vl_by_path, before, after, pushed):
    vl_calls = sum(vl_by_path.values())
    d = [{k: aft[k] - bef[k] for k in aft if k != "has_shared"} for bef, aft in zip(before, after)]
    shared_on = any(x["has_shared"] for x in after)
    s = {k: sum(x[k] for x in d) for k in d[0]}
    lookups = sum(s[f"cache_{o}"] for o in ("hit", "shared_hit", "miss", "coalesced"))
    print(f"# {a.label}: {len(replicas)} replicas, {len(panels)} panels, "
          f"{a.refreshes} refreshes every {a.interval:g} s over the last {a.range_hours:g} h "
          f"(step {a.step}); {elapsed:.0f} s; {pushed} live entries pushed; "
          f"shared tier {'on' if shared_on else 'off'}")
    print()
    print("| set-up | requests | errors | VictoriaLogs query calls | calls per request "
          "| lokivl backend calls | cache lookups | local hits | shared hits "
          "| misses | coalesced | local hit ratio | shared hit ratio (of local misses) "
          "| p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    local_misses = s["cache_shared_hit"] + s["cache_miss"]
    shared_ratio = pct(s["cache_shared_hit"], local_misses) if shared_on else "off"
    print(f"| {a.label} | {sent} | {len(errors)} | {vl_calls:.0f} | {vl_calls / sent:.2f} "
          f"| {s['backend_calls']:.0f} | {lookups:.0f} | {s['cache_hit']:.0f} "
          f"| {s['cache_shared_hit']:.0f} | {s['cache_miss']:.0f} | {s['cache_coalesced']:.0f} "
          f"| {pct(s['cache_hit'], lookups)} | {shared_ratio} "
          f"| {1000 * quantile(lat, 0.5):.0f} | {1000 * quantile(lat, 0.95):.0f} |")
    print()
    print("| replica | cache lookups | local hit ratio | shared hit ratio (of local misses) "
          "| shared ops hit / miss / stored | shared errors / timeouts / skipped "
          "| lokivl backend calls |")
    print("|---|---:|---:|---:|---|---|---:|")
    for url, x in zip(replicas, d):
        lk = sum(x[f"cache_{o}"] for o in ("hit", "shared_hit", "miss", "coalesced"))
        lm = x["cache_shared_hit"] + x["cache_miss"]
        sh = pct(x["cache_shared_hit"], lm) if shared_on else "off"
        ops = (f"{x['shared_hit']:.0f} / {x['shared_miss']:.0f} / {x['shared_stored']:.0f}"
               if shared_on else "–")
        errs = (f"{x['shared_error']:.0f} / {x['shared_timeout']:.0f} / {x['shared_skipped']:.0f}"
                if shared_on else "–")
        print(f"| {url} | {lk:.0f} | {pct(x['cache_hit'], lk)} | {sh} | {ops} | {errs} "
              f"| {x['backend_calls']:.0f} |")
    print()
    by_path = ", ".join(
        f"{p.rsplit('/', 1)[-1]} {v:.0f}" for p, v in sorted(vl_by_path.items()) if v
    )
    print(f"VictoriaLogs query calls by path: {by_path or 'none'}")
    if errors:
        print()
        print(f"{len(errors)} requests failed; first: {errors[0]}")
        sys.exit(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ing = sub.add_parser("ingest", help="push Promtail-style logs up to now")
    ing.add_argument("--push-url", required=True,
                     help="VictoriaLogs (or vlinsert) base URL; /insert/loki/api/v1/push is added")
    ing.add_argument("--hours", type=float, default=7.0, help="hours of logs up to now (7)")
    ing.add_argument("--rate", type=float, default=5.0, help="entries per second, all streams (5)")
    run = sub.add_parser("run", help="refresh the dashboard and report")
    run.add_argument("--replica", action="append", required=True,
                     help="lokivl base URL; repeat per replica (round robin per request)")
    run.add_argument("--vl-url", required=True,
                     help="VictoriaLogs (single node or vlselect) base URL, for its /metrics")
    run.add_argument("--dashboard", help="JSON list of panels {name, path, params}; "
                     "default: five built-in panels")
    run.add_argument("--refreshes", type=int, default=30, help="dashboard refreshes (30)")
    run.add_argument("--interval", type=float, default=10.0, help="seconds between refreshes (10)")
    run.add_argument("--range-hours", type=float, default=6.0, help="time range, hours (6)")
    run.add_argument("--step", default="60s", help="query_range step of every panel (60s)")
    run.add_argument("--label", default="run", help="the set-up's name in the table")
    run.add_argument("--push-url", help="also push live entries here before each refresh")
    run.add_argument("--live-rate", type=float, default=5.0,
                     help="live entries per second with --push-url (5)")
    for p in (ing, run):
        p.add_argument("--org-id", help="X-Scope-OrgID to send (none by default)")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds per HTTP call (60)")
        p.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    if a.cmd == "ingest":
        cmd_ingest(a)
    else:
        if a.refreshes < 1 or a.refreshes > 10_000 or a.interval < 0:
            die("--refreshes must be 1..10000 and --interval >= 0")
        cmd_run(a)


if __name__ == "__main__":
    main()

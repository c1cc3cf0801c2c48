#!/usr/bin/env python3
"""Keeps loki-bench's data reaching "now" while the cells run.

loki-bench's windows end at the moment each request is sent, and its seeder
stops a minute before it finished. This pushes, every --interval seconds,
the lines of the seconds since the last push for the seeder's twelve
streams (same stream labels; JSON and logfmt lines with the fields the
workloads read: level, status, latency_ms, method, path, duration_ms),
through VictoriaLogs' Loki push endpoint as the seeder does. It stops by
itself after --max-seconds.
"""
import argparse
import json
import random
import time
import urllib.request

SERVICES = [
    ("api-gateway", "prod", "us-east-1", "eks-prod-a", "v2.14.3", "json"),
    ("api-gateway", "prod", "us-west-2", "eks-prod-b", "v2.14.3", "json"),
    ("payment-service", "prod", "us-east-1", "eks-prod-a", "v1.8.0", "logfmt"),
    ("auth-service", "prod", "us-east-1", "eks-prod-a", "v3.2.1", "json"),
    ("nginx-ingress", "ingress-nginx", "us-east-1", "eks-prod-a", "1.9.4", "nginx"),
    ("worker-service", "prod", "us-east-1", "eks-prod-a", "v0.9.2", "logfmt"),
    ("db-postgres", "data", "us-east-1", "eks-data-a", "15.3", "postgres"),
    ("cache-redis", "data", "us-east-1", "eks-data-a", "7.2.0", "logfmt"),
    ("frontend-ssr", "prod", "us-east-1", "eks-prod-a", "v4.1.0", "json"),
    ("frontend-ssr", "prod", "us-west-2", "eks-prod-b", "v4.1.0", "json"),
    ("batch-etl", "batch", "us-east-1", "eks-batch-a", "v2.0.5", "json"),
    ("ml-serving", "ml", "us-east-1", "eks-ml-a", "v1.3.0", "json"),
]
LEVELS = ["debug", "info", "info", "info", "info", "warn", "warn", "error"]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
PATHS = ["/api/v1/users", "/api/v1/orders", "/api/v2/events", "/health", "/api/v1/payments"]
STATUSES = [200] * 12 + [201, 400, 404, 429, 500, 502, 503]


def line(app, fmt, ts_ns):
    level = random.choice(LEVELS)
    trace = "%032x" % random.getrandbits(128)
    if fmt == "json":
        status = random.choice(STATUSES)
        method, path = random.choice(METHODS), random.choice(PATHS)
        latency = random.randint(1, 800) + (random.randint(0, 3000) if status >= 500 else 0)
        entry = {
            "level": level, "msg": f"{method} {path} {status} {latency}ms",
            "method": method, "path": path, "status": status,
            "latency_ms": latency, "trace_id": trace, "service": app,
        }
        body = json.dumps(entry, separators=(",", ":"))
        entry["_msg"] = body
        return json.dumps(entry, separators=(",", ":"))
    if fmt == "nginx":
        status = random.choice(STATUSES)
        return (f'10.0.{random.randint(0, 9)}.{random.randint(1, 254)} - - '
                f'"{random.choice(METHODS)} {random.choice(PATHS)} HTTP/1.1" {status} '
                f'{random.randint(100, 50000)} {random.random() * 2:.3f}')
    return (f'level={level} msg="event" duration_ms={random.randint(1, 5000)} '
            f'trace_id={trace} service={app}')


def push(vl, since_ns, until_ns, per_second):
    streams = []
    for app, ns, region, cluster, version, fmt in SERVICES:
        values = []
        n = max(1, int((until_ns - since_ns) / 1e9 * per_second))
        for i in range(n):
            ts = since_ns + (until_ns - since_ns) * i // n
            values.append([str(ts), line(app, fmt, ts)])
        streams.append({
            "stream": {"app": app, "namespace": ns, "job": f"{ns}/{app}",
                       "env": "production", "region": region, "cluster": cluster,
                       "version": version, "log_format": fmt},
            "values": values,
        })
    body = json.dumps({"streams": streams}).encode()
    req = urllib.request.Request(vl + "/insert/loki/api/v1/push", data=body,
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=30).read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vl", required=True)
    ap.add_argument("--interval", type=float, default=5)
    # The seeder's default density: 21 lines per service every 30 s.
    ap.add_argument("--per-second", type=float, default=0.7)
    ap.add_argument("--max-seconds", type=float, default=4 * 3600)
    a = ap.parse_args()
    started = time.time()
    last = time.time_ns() - 120 * 10**9
    while time.time() - started < a.max_seconds:
        now = time.time_ns()
        try:
            push(a.vl, last, now, a.per_second)
            last = now
            print(f"pushed up to {now}", flush=True)
        except OSError as e:
            print(f"push failed: {e}", flush=True)
        time.sleep(a.interval)


if __name__ == "__main__":
    main()

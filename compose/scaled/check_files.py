#!/usr/bin/env python3
"""Checks the scaled compose set-up's files without Docker.

- every YAML file parses (needs PyYAML; skipped with a note without it) and
  the dashboard JSON parses;
- every bind mount of compose/docker-compose.scaled.yml names a file or
  folder of this repository;
- every lokivl metric the dashboard queries is registered somewhere in
  crates/ (a `_bucket` series by its histogram's name), so a renamed
  metric does not leave an empty panel unnoticed;
- every dashboard query names its datasource through ${DS_PROMETHEUS}, so
  the file imports into any Grafana;
- with --prometheus URL, every dashboard query is evaluated by that
  Prometheus (which scrapes lokivl replicas): a query it refuses is a
  problem, one that returns no series is listed (a shared-tier panel is
  empty while --shared-cache is off).

Run from anywhere: python3 compose/scaled/check_files.py [--prometheus URL]
Exit status 1 on a problem, with one line per problem.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose" / "docker-compose.scaled.yml"
DASHBOARD = ROOT / "packaging" / "grafana" / "lokivl-dashboard.json"
YAMLS = [
    COMPOSE,
    ROOT / "compose" / "scaled" / "prometheus.yml",
    *sorted((ROOT / "compose" / "scaled" / "grafana").rglob("*.yaml")),
]
DS = "${DS_PROMETHEUS}"


def evaluate(prometheus: str, dash: dict, problems: list) -> None:
    """Runs every dashboard query as an instant query, as Grafana would."""
    for panel in dash["panels"]:
        for t in panel.get("targets", []):
            expr = t["expr"].replace("$__rate_interval", "1m").replace("$instance", ".+")
            url = prometheus.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    answer = json.load(r)
            except urllib.error.HTTPError as e:
                answer = json.load(e)
            if answer.get("status") != "success":
                problems.append(f"panel {panel['title']!r} {t['refId']}: {answer.get('error')}")
            elif not answer["data"]["result"]:
                print(f"no series yet: panel {panel['title']!r} {t['refId']}")


def main() -> int:
    ap = argparse.ArgumentParser(description="Checks the scaled compose set-up's files.")
    ap.add_argument("--prometheus", help="evaluate the dashboard's queries on this Prometheus")
    args = ap.parse_args()
    problems: list[str] = []
    try:
        import yaml  # type: ignore
    except ImportError:
        yaml = None
        print("note: PyYAML missing, YAML files and mounts not checked")
    if yaml:
        for f in YAMLS:
            try:
                yaml.safe_load(f.read_text(encoding="utf-8"))
            except yaml.YAMLError as e:
                problems.append(f"{f.relative_to(ROOT)}: {e}")
        compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
        for name, svc in compose["services"].items():
            for v in svc.get("volumes", []):
                src = v.split(":", 1)[0]
                if src.startswith((".", "/")) and not (COMPOSE.parent / src).exists():
                    problems.append(f"service {name}: mount source {src} does not exist")

    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    sources = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "crates").rglob("*.rs")
    )
    used: set[str] = set()
    for panel in dash["panels"]:
        if panel["type"] == "row":
            continue
        if panel.get("datasource", {}).get("uid") != DS:
            problems.append(f"panel {panel['title']!r}: datasource is not {DS}")
        for t in panel.get("targets", []):
            if t.get("datasource", {}).get("uid") != DS:
                problems.append(f"panel {panel['title']!r} {t['refId']}: datasource is not {DS}")
            used.update(re.findall(r"\b(lokivl_[a-z_]+)", t["expr"]))
    for name in sorted(used):
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if f'"{base}"' not in sources:
            problems.append(f"dashboard queries {name}, which no crate registers")
    if args.prometheus:
        evaluate(args.prometheus, dash, problems)
    for p in problems:
        print(p)
    print(f"{len(used)} lokivl metrics in the dashboard; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# lokivl against the Go loki-vl-proxy on the Go proxy's own load tool
# (`loki-bench`, from the bench/ folder of ReliablyObserve/loki-vl-proxy),
# both in front of one VictoriaLogs seeded by that tool's seeder and kept
# topped up to "now" while the cells run.
#
# The Go programs are taken as binaries: build them yourself from that
# repository's source (this repository holds none of their code):
#
#   (cd loki-vl-proxy && go build -o /tmp/loki-vl-proxy ./cmd/proxy)
#   (cd loki-vl-proxy/bench && go build -o /tmp/loki-bench ./cmd/loki-bench \
#        && go build -o /tmp/loki-seed ./cmd/seed)
#   benches/gocompare/run.sh --go-proxy /tmp/loki-vl-proxy \
#        --loki-bench /tmp/loki-bench --seed /tmp/loki-seed
#
# Cells (each workload x cell, 10 clients, --duration each, the two proxies
# one after the other against the same VictoriaLogs):
#   off       caches off on both, unique windows (--unique-windows)
#   unique    default settings on both, unique windows
#   repeated  default settings on both, repeated windows
# Results: one loki-bench JSON per proxy and cell in --out, and a table of
# req/s, proxy CPU per request and peak RSS printed by summary.py.
#
# `--keep-data` reuses the VictoriaLogs data a previous run seeded in --out.
# Everything listens on 127.0.0.1 and stops at the end (or on Ctrl-C).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

go_proxy="" bench="" seed="" lokivl="" vl_bin="${LOKIVL_VL_BIN:-}"
days=3 duration=15s clients=10 warmup=5s
workloads="small,heavy,long_range,compute" cells="off,unique,repeated"
out="$root/target/gocompare"
vl_port=19428 lokivl_port=13100 go_port=13101

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}"; exit 2; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --go-proxy) go_proxy="$2"; shift 2 ;;
        --loki-bench) bench="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --lokivl) lokivl="$2"; shift 2 ;;
        --vl) vl_bin="$2"; shift 2 ;;
        --days) days="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --clients) clients="$2"; shift 2 ;;
        --workloads) workloads="$2"; shift 2 ;;
        --cells) cells="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --keep-data) keep_data=1; shift ;;
        *) usage ;;
    esac
done
[[ -x "$go_proxy" && -x "$bench" && -x "$seed" ]] || usage

if [[ -z "$lokivl" ]]; then
    (cd "$root" && cargo build --release -q -p proxy --bin lokivl)
    lokivl="$root/target/release/lokivl"
fi
[[ -n "$vl_bin" ]] || vl_bin="$("$root/tools/victorialogs/build.sh")"

mkdir -p "$out"
rm -f "$out/procstats.txt"
data="$out/vl-data"
pids=()
stop_all() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop_all EXIT INT TERM

wait_http() { # url
    for _ in $(seq 1 100); do
        curl -sf -o /dev/null "$1" && return 0
        sleep 0.2
    done
    echo "run.sh: $1 did not answer" >&2
    return 1
}

vl="http://127.0.0.1:$vl_port"
fresh=""
if [[ -z "${keep_data:-}" || ! -d "$data" ]]; then
    rm -rf "$data"
    fresh=1
fi
"$vl_bin" -httpListenAddr="127.0.0.1:$vl_port" -storageDataPath="$data" \
    -retentionPeriod=30d -search.maxQueryLen=1MiB -loggerLevel=WARN \
    >"$out/vl.log" 2>&1 &
pids+=($!)
wait_http "$vl/health"
if [[ -n "$fresh" ]]; then
    echo "== seeding $days days into VictoriaLogs (loki-bench's seeder)"
    "$seed" --skip-loki --vl="$vl" --days="$days" >"$out/seed.log" 2>&1
fi

echo "== live top-up to now (every 5 s)"
python3 "$here/topup.py" --vl "$vl" --interval 5 >"$out/topup.log" 2>&1 &
pids+=($!)
sleep 6

# Starts one proxy for one cell; sets proxy_pid and proxy_url.
start_proxy() { # name cell -> sets proxy_pid, proxy_url
    local name="$1" cell="$2"
    case "$name" in
        lokivl)
            local cache=()
            [[ "$cell" == off ]] && cache=(--cache-max-bytes 0)
            "$lokivl" --listen "127.0.0.1:$lokivl_port" --backend "$vl" \
                --log-level warn "${cache[@]}" >"$out/lokivl-$cell.log" 2>&1 &
            proxy_pid=$!
            proxy_url="http://127.0.0.1:$lokivl_port"
            ;;
        go)
            local cache=()
            [[ "$cell" == off ]] && cache=(-cache-disabled)
            "$go_proxy" -listen="127.0.0.1:$go_port" -backend="$vl" \
                -log-level=warn -rate-limit-per-second=0 -max-concurrent=0 \
                "${cache[@]}" >"$out/go-$cell.log" 2>&1 &
            proxy_pid=$!
            proxy_url="http://127.0.0.1:$go_port"
            ;;
    esac
    wait_http "$proxy_url/loki/api/v1/labels"
}

# Peak RSS (VmHWM, KiB) and CPU seconds (utime+stime) of a process.
proc_stats() { # pid -> "hwm_kib cpu_s"
    local hwm ticks
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$1/status")
    ticks=$(awk '{print $14 + $15}' "/proc/$1/stat")
    echo "$hwm $(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", t / hz}')"
}

IFS=, read -r -a cell_list <<<"$cells"
IFS=, read -r -a workload_list <<<"$workloads"
for cell in "${cell_list[@]}"; do
    for name in lokivl go; do
        start_proxy "$name" "$cell"
        for w in "${workload_list[@]}"; do
            extra=()
            [[ "$cell" != repeated ]] && extra=(--unique-windows)
            before=$(proc_stats "$proxy_pid")
            "$bench" --proxy="$proxy_url" --skip-loki --skip-vl-direct \
                --skip-proxy-no-cache --skip-proxy-partial \
                --proxy-metrics="$proxy_url/metrics" \
                --workloads="$w" --clients="$clients" --duration="$duration" \
                --warmup="$warmup" --output="$out/$name-$cell-$w" "${extra[@]}" \
                >"$out/$name-$cell-$w.log" 2>&1
            after=$(proc_stats "$proxy_pid")
            echo "$name $cell $w $before $after" >>"$out/procstats.txt"
            echo "   $name $cell $w done"
        done
        kill "$proxy_pid"
        wait "$proxy_pid" 2>/dev/null || true
    done
done

python3 "$here/summary.py" "$out"

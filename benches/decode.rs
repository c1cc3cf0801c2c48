//! `decode/ndjson_<rows>/<mode>`: a VictoriaLogs NDJSON answer to the Loki
//! `query_range` JSON body, in both label modes.
//!
//! Each iteration copies the body (simd-json rewrites it in place, and the
//! proxy reads it into a fresh buffer anyway) and encodes into a new `Vec`,
//! as a handler does. Allocations per op are counted with a counting global
//! allocator before criterion starts and printed as `allocs/op`.
//! `…/serde_json_value_baseline` parses the same lines into
//! `serde_json::Value` only, as a same-machine yardstick.
//!
//! `LOKIVL_DECODE_LOOP=<mode>:<rows>:<iterations>` (e.g. `categorize:100:2000`)
//! skips criterion and runs that many encodes: a fixed workload for
//! `valgrind --tool=callgrind`, whose instruction counts hold on a loaded
//! machine where wall-clock does not. Two runs of N and 2N iterations
//! differ by N encodes, start-up cancelled.

use std::alloc::System;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group};
use engine::direction::Direction;
use engine::encode::streams::{StreamsOptions, encode_streams};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const SIZES: [usize; 2] = [100, 10_000];

fn opts(rows: usize, categorize: bool) -> StreamsOptions {
    StreamsOptions {
        direction: Direction::Backward,
        limit: rows,
        categorize,
        parsed_prefix: None,
    }
}

fn encode_once(body: &[u8], o: &StreamsOptions) -> Vec<u8> {
    let mut buf = body.to_vec();
    let mut out = Vec::new();
    let r = encode_streams(&mut buf, o, &mut out);
    assert!(r.is_ok(), "bench input must decode");
    out
}

/// Prints allocations and bytes allocated per op (warm thread-local scratch,
/// input copy and output `Vec` included).
fn report_allocs() {
    for rows in SIZES {
        let body = benches::vl_ndjson(rows);
        for (mode, categorize) in [("plain", false), ("categorize", true)] {
            let o = opts(rows, categorize);
            black_box(encode_once(&body, &o)); // warm the per-thread scratch
            let iters = if rows > 1000 { 10 } else { 200 };
            let region = Region::new(GLOBAL);
            for _ in 0..iters {
                black_box(encode_once(&body, &o));
            }
            let s = region.change();
            eprintln!(
                "allocs/op decode/ndjson_{rows}/{mode}: {} allocations, {} bytes (input {} bytes)",
                s.allocations / iters,
                s.bytes_allocated / iters,
                body.len()
            );
        }
    }
}

fn bench_decode(c: &mut Criterion) {
    report_allocs();
    for rows in SIZES {
        let body = benches::vl_ndjson(rows);
        let mut group = c.benchmark_group("decode");
        group.throughput(Throughput::Elements(rows as u64));
        if rows > 1000 {
            group.sample_size(30);
        }
        for (mode, categorize) in [("plain", false), ("categorize", true)] {
            let o = opts(rows, categorize);
            group.bench_function(format!("ndjson_{rows}/{mode}"), |b| {
                b.iter_batched_ref(
                    || body.clone(),
                    |buf| {
                        let mut out = Vec::new();
                        let r = encode_streams(buf, &o, &mut out);
                        black_box((r, out))
                    },
                    BatchSize::SmallInput,
                );
            });
        }
        // Same-machine reference: only parsing each line into a
        // `serde_json::Value` (no grouping, no output), the generic approach.
        group.bench_function(format!("ndjson_{rows}/serde_json_value_baseline"), |b| {
            b.iter(|| {
                for line in body.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
                    let v: Result<serde_json::Value, _> = serde_json::from_slice(line);
                    black_box(v.is_ok());
                }
            });
        });
        group.finish();
    }
}

/// Runs the encodes `spec` names (see the module doc).
fn run_loop(spec: &str) {
    let parts: Vec<&str> = spec.split(':').collect();
    let [mode, rows, iters] = parts[..] else {
        panic!("LOKIVL_DECODE_LOOP is <plain|categorize>:<rows>:<iterations>, not {spec:?}");
    };
    let rows: usize = rows.parse().expect("rows");
    let iters: usize = iters.parse().expect("iterations");
    let o = opts(rows, mode == "categorize");
    let body = benches::vl_ndjson(rows);
    for _ in 0..iters {
        black_box(encode_once(&body, &o));
    }
}

criterion_group!(benches, bench_decode);

fn main() {
    if let Ok(spec) = std::env::var("LOKIVL_DECODE_LOOP") {
        run_loop(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

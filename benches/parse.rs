//! `parse/<case>`: LogQL text → validated AST only (no lowering), for the
//! typical Grafana metric query and the shapes in [`benches::QUERIES`].
//! The issue's target is `parse/grafana_typical` under 5 µs.
//!
//! `LOKIVL_PARSE_LOOP=<case>:<iterations>` (e.g. `grafana_typical:20000`)
//! skips criterion and parses that case that many times: a fixed workload
//! for `valgrind --tool=callgrind`, whose instruction counts hold on a
//! loaded machine where wall-clock does not. Two runs of N and 2N
//! iterations differ by N parses, start-up cancelled.

use std::hint::black_box;

use criterion::{Criterion, criterion_group};

/// What Grafana's Explore sends for a "count errors by level" panel.
const GRAFANA_TYPICAL: &str = r#"sum by (level) (count_over_time({app="x"} |= "err" | json [5m]))"#;

fn cases() -> impl Iterator<Item = (&'static str, &'static str)> {
    std::iter::once(("grafana_typical", GRAFANA_TYPICAL)).chain(benches::QUERIES.iter().copied())
}

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for (name, q) in cases() {
        if let Err(e) = logql_parser::parse(q) {
            eprintln!("parse/{name}: {q} => error: {e}");
        }
        group.bench_function(name, |b| {
            b.iter(|| black_box(logql_parser::parse(black_box(q))))
        });
    }
    group.finish();
}

/// Runs the parses `spec` names (see the module doc).
fn run_loop(spec: &str) {
    let Some((case, iters)) = spec.split_once(':') else {
        panic!("LOKIVL_PARSE_LOOP is <case>:<iterations>, not {spec:?}");
    };
    let Some((_, q)) = cases().find(|(name, _)| *name == case) else {
        panic!("LOKIVL_PARSE_LOOP: no case {case:?}");
    };
    let iters: usize = iters.parse().expect("iterations");
    for _ in 0..iters {
        let parsed = black_box(logql_parser::parse(black_box(q)));
        assert!(parsed.is_ok(), "bench input must parse");
    }
}

criterion_group!(benches, bench_parse);

fn main() {
    if let Ok(spec) = std::env::var("LOKIVL_PARSE_LOOP") {
        run_loop(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

//! `parse_lower/<case>`: LogQL text → parsed AST → lowered LogsQL plan →
//! LogsQL text, for the query shapes in [`benches::QUERIES`].
//!
//! This is the work the Go proxy's "translation" benchmark measures
//! (2.7–15 µs there). Allocations per op are printed before criterion runs.

use std::alloc::System;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use logql_parser::Expr;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Parses and lowers `q`; `Err` text when either step fails.
fn translate(q: &str) -> Result<String, String> {
    let expr = logql_parser::parse(q).map_err(|e| e.to_string())?;
    match expr {
        Expr::Log(log) => {
            let plan = logsql_ast::lower_log(&log, &logsql_ast::Discovery::default())
                .map_err(|e| e.to_string())?;
            Ok(plan.query.to_string())
        }
        Expr::Metric(_) => Err("metric query".to_owned()),
    }
}

fn bench_parse_lower(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_lower");
    for (name, q) in benches::QUERIES {
        match translate(q) {
            Ok(logsql) => eprintln!("parse_lower/{name}: {q}  =>  {logsql}"),
            Err(e) => eprintln!("parse_lower/{name}: {q}  =>  error: {e}"),
        }
        let region = Region::new(GLOBAL);
        for _ in 0..100 {
            let _ = black_box(translate(black_box(q)));
        }
        let s = region.change();
        eprintln!(
            "allocs/op parse_lower/{name}: {} allocations, {} bytes",
            s.allocations / 100,
            s.bytes_allocated / 100
        );
        group.bench_function(*name, |b| b.iter(|| black_box(translate(black_box(q)))));
    }
    group.finish();
}

criterion_group!(benches, bench_parse_lower);
criterion_main!(benches);

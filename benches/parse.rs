//! `parse/<case>`: LogQL text → validated AST only (no lowering), for the
//! typical Grafana metric query and the shapes in [`benches::QUERIES`].
//! The issue's target is `parse/grafana_typical` under 5 µs.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

/// What Grafana's Explore sends for a "count errors by level" panel.
const GRAFANA_TYPICAL: &str = r#"sum by (level) (count_over_time({app="x"} |= "err" | json [5m]))"#;

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    let cases = std::iter::once(("grafana_typical", GRAFANA_TYPICAL))
        .chain(benches::QUERIES.iter().copied());
    for (name, q) in cases {
        if let Err(e) = logql_parser::parse(q) {
            eprintln!("parse/{name}: {q} => error: {e}");
        }
        group.bench_function(name, |b| {
            b.iter(|| black_box(logql_parser::parse(black_box(q))))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);

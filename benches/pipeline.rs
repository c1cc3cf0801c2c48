//! `pipeline/json_line_format_10000`: the proxy-side evaluation of
//! `| json | line_format "{{.msg}}"` over 10,000 JSON lines on one core
//! (issue 4 asks for under 10 ms). Each line carries two stream labels and
//! one structured-metadata field, as rows decoded from VictoriaLogs do.
//! `…/capture` also copies every kept entry out (what the handler does).
//! `pipeline/detected_level_10000` derives Loki's `detected_level` for each
//! of those lines and of 10,000 plain-text lines (what label discovery adds
//! per entry of a log query answer).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::encode::pipeline::Entries;
use engine::pipeline::Pipeline;
use logql_parser::Expr;

const LINES: usize = 10_000;

fn lines() -> Vec<String> {
    (0..LINES)
        .map(|i| {
            format!(
                r#"{{"ts":"2026-11-22T04:21:{:02}.{i:06}Z","level":"{}","msg":"request {i} served in {}ms","status":{},"req":{{"method":"GET","path":"/api/v1/items/{i}"}},"bytes":{}}}"#,
                i % 60,
                ["info", "warn", "error"][i % 3],
                i % 250,
                [200, 404, 500][i % 3],
                i * 7
            )
        })
        .collect()
}

fn pipeline(q: &str) -> Pipeline {
    let Ok(Expr::Log(e)) = logql_parser::parse(q) else {
        panic!("bench query must parse as a log query");
    };
    Pipeline::new(&e.pipeline).expect("bench pipeline must compile")
}

fn bench(c: &mut Criterion) {
    let input = lines();
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(LINES as u64));
    let stream = [("app", "api"), ("namespace", "prod")];
    let meta = [("trace_id", "4bf92f35")];
    let mut p = pipeline(r#"{app="api"} | json | line_format "{{.msg}}""#);
    g.bench_function("json_line_format_10000", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for (i, l) in input.iter().enumerate() {
                if p.process(i as i64, l, stream, meta) {
                    bytes += p.line().len();
                }
            }
            black_box(bytes)
        })
    });
    g.bench_function("json_line_format_10000/capture", |b| {
        b.iter(|| {
            let mut out = Entries::with_capacity(LINES);
            for (i, l) in input.iter().enumerate() {
                if p.process(i as i64, l, stream, meta) {
                    out.capture(0, i as i64, p.line(), p.labels());
                }
            }
            black_box(out)
        })
    });
    let mut f =
        pipeline(r#"{app="api"} | logfmt | status >= 500 | line_format "{{.method}} {{.path}}""#);
    let logfmt: Vec<String> = (0..LINES)
        .map(|i| {
            format!(
                "level=info method=GET path=/x/{i} status={} took={}ms",
                [200, 500][i % 2],
                i % 100
            )
        })
        .collect();
    g.bench_function("logfmt_filter_format_10000", |b| {
        b.iter(|| {
            let mut n = 0;
            for (i, l) in logfmt.iter().enumerate() {
                n += usize::from(f.process(i as i64, l, stream, meta));
            }
            black_box(n)
        })
    });
    let plain: Vec<String> = (0..LINES)
        .map(|i| {
            format!(
                "2026-11-22 04:21:{:02} request {i} took {}ms: all good",
                i % 60,
                i % 250
            )
        })
        .collect();
    let none = |_: &str| None;
    g.bench_function("detected_level_10000", |b| {
        b.iter(|| {
            let mut n = 0;
            for (j, p) in input.iter().zip(&plain) {
                n += engine::discovery::level_of(None, &none, j).len();
                n += engine::discovery::level_of(None, &none, p).len();
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! `template/<case>`: rendering a parsed `line_format` template over 10,000
//! log entries, the proxy-side cost of `| line_format "…"`.
//!
//! * `line_format_fields`: text and `.field` references only (the fast path;
//!   no allocation per line beyond the reused output buffer).
//! * `functions`: pipelines through Loki's functions, `printf`, `if`/`eq`
//!   and date formatting (the general executor).
//!
//! Allocations per 10,000 renders are printed before criterion runs.

use std::alloc::System;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use go::template::{Context, Template};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const LINES: usize = 10_000;

/// One log entry's labels, line and timestamp.
struct Entry {
    labels: Vec<(String, String)>,
    line: String,
    ts: i64,
}

impl Context for Entry {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    fn line(&self) -> &str {
        &self.line
    }
    fn timestamp_ns(&self) -> i64 {
        self.ts
    }
}

/// Deterministic entries shaped like `| json` output of an access log.
fn entries() -> Vec<Entry> {
    let levels = ["info", "warn", "error", "debug"];
    (0..LINES)
        .map(|i| {
            let msg = format!("request {i} served for user-{} in {}ms", i % 97, i % 500);
            let labels = vec![
                ("app".to_string(), "api".to_string()),
                ("namespace".to_string(), "prod".to_string()),
                ("pod".to_string(), format!("api-{}", i % 13)),
                ("level".to_string(), levels[i % 4].to_string()),
                ("status".to_string(), (200 + (i % 5) * 100).to_string()),
                ("path".to_string(), format!("/api/v1/users/{}", i % 1000)),
                ("latency".to_string(), format!("{}ms", i % 500)),
                ("msg".to_string(), msg.clone()),
            ];
            let line = format!(r#"{{"level":"{}","msg":"{msg}"}}"#, levels[i % 4]);
            Entry {
                labels,
                line,
                ts: 1_700_000_000_000_000_000 + i as i64 * 1_000_000,
            }
        })
        .collect()
}

fn render_all(t: &Template, es: &[Entry], out: &mut String) -> usize {
    let mut total = 0;
    for e in es {
        out.clear();
        if t.render(e, out).is_ok() {
            total += out.len();
        }
    }
    total
}

fn bench_template(c: &mut Criterion) {
    let es = entries();
    let cases = [
        (
            "line_format_fields",
            "{{.level}} {{.msg}} status={{.status}} pod={{.pod}}",
        ),
        (
            "functions",
            r#"{{ __timestamp__ | date "15:04:05.000" }} {{ .level | ToUpper | printf "%-5s" }} {{ if eq .status "500" }}FAIL{{ else }}ok{{ end }} {{ regexReplaceAll "[0-9]+" .path "N" }} {{ trunc 20 .msg }} {{ div (int .status) 100 }}xx"#,
        ),
    ];
    let mut group = c.benchmark_group("template");
    group.throughput(Throughput::Elements(LINES as u64));
    for (name, text) in cases {
        let t = Template::parse(text).expect("bench template parses");
        let mut out = String::with_capacity(256);
        out.clear();
        let _ = t.render(&es[2], &mut out);
        eprintln!("template/{name}: {text}\n  => {out}");
        let region = Region::new(GLOBAL);
        black_box(render_all(&t, &es, &mut out));
        let s = region.change();
        eprintln!(
            "template/{name}: {} allocations per {LINES} renders",
            s.allocations
        );
        group.bench_function(name, |b| {
            b.iter(|| black_box(render_all(&t, black_box(&es), &mut out)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_template);
criterion_main!(benches);

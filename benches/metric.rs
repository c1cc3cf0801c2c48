//! `metric/window/<series>x<buckets>` and `metric/binary/<series>`: the two
//! hot loops of metric queries in the proxy.
//!
//! * window: the sliding-window combiner over per-bucket counts, shaped like
//!   `rate({…}[5m])` at a 60 s step over 24 h (1 m buckets, 1,445 buckets and
//!   1,441 steps per series), for 10 and 100 series.
//! * binary: one-to-one division of two vectors of N series over 1,441
//!   steps (`div_…`), and many-to-one `* on (app) group_left` of 4·N
//!   `(app, pod)` series by N `app` series (`group_left_…`): vector
//!   matching per step.
//! * window at a 5 m range and 1 m step with raw 15 s buckets
//!   (`rate_15s_buckets/…`): the combiner when gcd(range, step) is finer
//!   than the step.
//! * json: writing a `matrix` answer of 10 series × 1,441 steps, with
//!   integer counts (`count_over_time`) and with rates (counts / 60), the
//!   last step of every metric `query_range`.
//! * rows: a range aggregation whose pipeline runs in the proxy
//!   (`rows::extract`), over 10,000 NDJSON rows of 50 streams with JSON
//!   lines: every label kept (`count_over_time(… | json [1m])`, about a
//!   thousand series) and an `unwrap` grouped by `pod` (50 series).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::metric::buckets::{BucketSeries, Stats};
use engine::metric::window::{WindowSpec, evaluate};
use engine::metric::{Grid, Point, Series, Value, binary};
use logql_parser::{BinaryModifier, BinaryOp, GroupModifier, RangeOp, VectorMatching};

const S: i64 = 1_000_000_000;
const STEP: i64 = 60 * S;
const DAY: i64 = 86_400 * S;

fn buckets(series: usize) -> Vec<BucketSeries> {
    buckets_of(series, STEP, 1445)
}

fn buckets_of(series: usize, width: i64, n: i64) -> Vec<BucketSeries> {
    (0..series)
        .map(|i| BucketSeries {
            labels: vec![("app".into(), format!("app-{i}"))],
            buckets: (0..n)
                .map(|b| {
                    (
                        b * width,
                        Stats {
                            count: ((b * 7 + i as i64) % 13) as f64,
                            ..Stats::default()
                        },
                    )
                })
                .collect(),
        })
        .collect()
}

fn window(c: &mut Criterion) {
    let grid = Grid::range(5 * STEP, 5 * STEP + DAY, STEP);
    let spec = WindowSpec {
        op: RangeOp::Rate,
        range: 5 * STEP,
        offset: 0,
        divisor: 1.0,
        unwrapped: false,
    };
    let mut g = c.benchmark_group("metric/window");
    for n in [10usize, 100] {
        let input = buckets(n);
        g.throughput(Throughput::Elements((n * 1445) as u64));
        g.bench_function(format!("{n}x1445"), |b| {
            b.iter(|| evaluate(black_box(&input), &grid, &spec).map(|m| m.len()))
        });
    }
    // 15 s buckets: four per step, 20 per 5 m window.
    let input = buckets_of(10, 15 * S, 4 * 1445);
    g.throughput(Throughput::Elements((10 * 4 * 1445) as u64));
    g.bench_function("rate_15s_buckets/10x5780", |b| {
        b.iter(|| evaluate(black_box(&input), &grid, &spec).map(|m| m.len()))
    });
    g.finish();
}

fn matrix(n: usize, k: f64) -> Vec<Series> {
    (0..n)
        .map(|i| Series {
            labels: vec![
                ("app".into(), format!("app-{i}")),
                ("env".into(), "prod".into()),
            ],
            points: (0..1441u32)
                .map(|step| Point {
                    step,
                    v: k + f64::from(step % 17) + i as f64,
                })
                .collect(),
        })
        .collect()
}

fn binary_matching(c: &mut Criterion) {
    let grid = Grid::range(0, 1440 * STEP, STEP);
    let modifier = BinaryModifier::default();
    let mut g = c.benchmark_group("metric/binary");
    for n in [10usize, 100] {
        let (l, r) = (matrix(n, 1.0), matrix(n, 2.0));
        g.throughput(Throughput::Elements((n * 1441) as u64));
        g.bench_function(format!("div_{n}x1441"), |b| {
            b.iter(|| {
                binary::apply(
                    BinaryOp::Div,
                    &modifier,
                    Value::Vector(black_box(l.clone())),
                    Value::Vector(black_box(r.clone())),
                    &grid,
                )
                .map(|v| matches!(v, Value::Vector(m) if !m.is_empty()))
            })
        });
    }
    g.finish();
}

/// `n·pods` series labelled `(app, env, pod)`, `pods` per app.
fn matrix_pods(n: usize, pods: usize) -> Vec<Series> {
    let mut out = Vec::with_capacity(n * pods);
    for i in 0..n {
        for p in 0..pods {
            out.push(Series {
                labels: vec![
                    ("app".into(), format!("app-{i}")),
                    ("env".into(), "prod".into()),
                    ("pod".into(), format!("pod-{p}")),
                ],
                points: (0..1441u32)
                    .map(|step| Point {
                        step,
                        v: f64::from(step % 11) + p as f64,
                    })
                    .collect(),
            });
        }
    }
    out
}

fn group_left(c: &mut Criterion) {
    let grid = Grid::range(0, 1440 * STEP, STEP);
    let modifier = BinaryModifier {
        return_bool: false,
        matching: Some(VectorMatching {
            on: true,
            labels: vec!["app".into()],
            group: Some(GroupModifier {
                left: true,
                include: Vec::new(),
            }),
        }),
    };
    let mut g = c.benchmark_group("metric/binary");
    for n in [10usize, 100] {
        let (l, r) = (matrix_pods(n, 4), matrix(n, 2.0));
        g.throughput(Throughput::Elements((n * 4 * 1441) as u64));
        g.bench_function(format!("group_left_{}x1441", n * 4), |b| {
            b.iter(|| {
                binary::apply(
                    BinaryOp::Mul,
                    &modifier,
                    Value::Vector(black_box(l.clone())),
                    Value::Vector(black_box(r.clone())),
                    &grid,
                )
                .map(|v| matches!(v, Value::Vector(m) if m.len() == n * 4))
            })
        });
    }
    g.finish();
}

fn json(c: &mut Criterion) {
    let grid = Grid {
        start: 1_795_000_000 * S,
        step: STEP,
        len: 1441,
    };
    let summary = engine::encode::stats::Summary::default();
    let mut g = c.benchmark_group("metric/json");
    g.throughput(Throughput::Elements(10 * 1441));
    for (name, k, div) in [("counts_10x1441", 0.0, 1.0), ("rates_10x1441", 1.0, 60.0)] {
        let m: Vec<Series> = matrix(10, k)
            .into_iter()
            .map(|mut s| {
                for p in &mut s.points {
                    p.v /= div;
                }
                s
            })
            .collect();
        let answer = engine::answer::MetricAnswer::query(
            engine::answer::MetricResult::Matrix(m),
            grid,
            summary,
        );
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(1 << 16);
                engine::answer::encode::metric::write_metric(black_box(&answer), &mut out);
                out.len()
            })
        });
    }
    g.finish();
}

/// 10,000 rows of 50 pods, JSON lines with five fields.
fn rows_body() -> Vec<u8> {
    let mut out = String::new();
    for i in 0..10_000 {
        let pod = i % 50;
        out.push_str(&format!(
            concat!(
                r#"{{"_time":"2026-11-22T04:{:02}:{:02}.{:06}Z","#,
                r#""_stream":"{{app=\"api\",namespace=\"prod\",pod=\"api-{}\"}}","#,
                r#""_msg":"{{\"level\":\"{}\",\"status\":{},\"method\":\"GET\",\"path\":\"/x/{}\",\"duration_ms\":{}}}","#,
                r#""app":"api","namespace":"prod","pod":"api-{}"}}"#,
                "\n"
            ),
            i / 600,
            (i / 10) % 60,
            i,
            pod,
            ["info", "warn", "error"][i % 3],
            [200, 404, 500][i % 3],
            i % 7,
            i % 20,
            pod
        ));
    }
    out.into_bytes()
}

fn rows(c: &mut Criterion) {
    use engine::metric::rows::{Extract, extract};
    use engine::pipeline::hints::MetricGrouping;
    static OFF: logsql_ast::Discovery = logsql_ast::Discovery {
        service_name_labels: Vec::new(),
        log_levels: false,
    };
    let body = rows_body();
    let mut g = c.benchmark_group("metric/rows");
    g.throughput(Throughput::Elements(10_000));
    for (name, q) in [
        (
            "json_all_10000",
            r#"count_over_time({app="api"} | json [1m])"#,
        ),
        (
            "json_unwrap_by_pod_10000",
            r#"max_over_time({app="api"} | json | unwrap duration_ms [1m]) by (pod)"#,
        ),
    ] {
        let parsed = logql_parser::parse(q);
        let Ok(logql_parser::Expr::Metric(logql_parser::MetricExpr::RangeAggregation(r))) = parsed
        else {
            panic!("bench query must parse as a range aggregation: {parsed:?}");
        };
        let ex = Extract {
            op: r.op,
            unwrap: r.range.unwrap.as_ref().map(logql_parser::Unwrap::target),
            grouping: r.grouping.as_ref(),
            windows: None,
            hint: match &r.grouping {
                Some(gr) if !gr.without => MetricGrouping::By(&gr.labels),
                _ => MetricGrouping::All,
            },
            query_stages: &r.range.log.pipeline,
            discovery: &OFF,
        };
        let stages = r.range.log.pipeline.clone();
        let stop = engine::work::Stop::never();
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut input = body.clone();
                let s = extract(&mut input, &stages, &[], &ex, &stop).expect("extract");
                black_box(s.buckets.len())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, window, binary_matching, group_left, json, rows);
criterion_main!(benches);

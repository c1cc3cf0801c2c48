//! The adversarial suite of issue 14: no request, log line or client can
//! take lokivl down, stall it, or poison its cache.
//!
//! Every case starts lokivl as a real process (the built `lokivl` binary) in
//! front of a fake VictoriaLogs (canned and generated NDJSON, see
//! `fake`) or a real one (`LOKIVL_VL_BIN`; those cases
//! print one line and pass when there is none), attacks it, and asserts three
//! things: the process is still running and its stderr has no panic or stack
//! overflow, `/ready` answers within 500 ms (during the attack where the
//! attack lasts, and after it), and its peak resident memory (`VmHWM`) stayed
//! within the bound the case states. Most cases also check the answer a
//! client relies on (a 4xx or a 200, never a 5xx or a dropped connection;
//! cache answers equal to the uncached ones).
//!
//! At most two cases run at once and CPU-heavy ones run alone, to be kind to
//! a 2-core CI machine. `/ready` counts as stalled after two answers later
//! than 500 ms in a row, or one later than 2 s, so a single preemption of
//! the test process on a loaded machine does not fail a case.
//!
//! ```sh
//! LOKIVL_VL_BIN=/path/to/victoria-logs cargo test -p proxy --test adversarial -- --nocapture
//! ```

#[path = "../support/mod.rs"]
mod support;

mod fake;
mod gate;
mod rows;
mod ws;

use std::time::{Duration, Instant};

use futures_util::SinkExt as _;
use gate::{TempFile, assert_handled, gate, get, get_with, post_form};
use rows::{Dataset, HOUR_END_NS, HOUR_START_NS, row};
use support::backend::VictoriaLogs;
use support::client::{Answer, url};
use support::fake_vl::{FakeVl, Tail};
use support::lokivl::Lokivl;
use tokio_tungstenite::tungstenite::Message;

const SEC: Duration = Duration::from_secs(1);
/// Deadline of one hostile request: long enough for a debug build on a
/// loaded machine, short enough that a hang fails the case quickly.
const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

fn hour() -> (String, String) {
    (HOUR_START_NS.to_string(), HOUR_END_NS.to_string())
}

/// A log `query_range` over the test hour, as a POST form (no URL limit).
async fn log_query(base: &str, query: &str) -> Result<Answer, String> {
    let (s, e) = hour();
    post_form(
        &format!("{base}/loki/api/v1/query_range"),
        &[
            ("query", query),
            ("start", &s),
            ("end", &e),
            ("limit", "100"),
        ],
        REQUEST_DEADLINE,
    )
    .await
}

/// A metric `query_range` over the test hour, one point a minute.
async fn metric_query(base: &str, query: &str) -> Result<Answer, String> {
    let (s, e) = hour();
    post_form(
        &format!("{base}/loki/api/v1/query_range"),
        &[
            ("query", query),
            ("start", &s),
            ("end", &e),
            ("step", "60s"),
        ],
        REQUEST_DEADLINE,
    )
    .await
}

/// JSON log lines, `n` of them spread over the test hour.
fn json_rows(n: usize) -> Dataset {
    Dataset::spread(n, HOUR_START_NS, HOUR_END_NS, |i, t| {
        let msg = format!(
            r#"{{"level":"{}","msg":"request {i} served","status":{},"path":"/api/items/{}","dur_ms":{}}}"#,
            ["info", "warn", "error"][i % 3],
            200 + i % 5,
            i % 100,
            i % 250
        );
        row(t, "api", &msg, &[])
    })
}

/// Every `(stream, values)` entry of a streams answer, flattened.
fn entries(a: &Answer) -> Vec<(serde_json::Value, String, String)> {
    let v = a.json();
    let mut out = Vec::new();
    for s in v["data"]["result"].as_array().expect("streams result") {
        for e in s["values"].as_array().expect("values") {
            out.push((
                s["stream"].clone(),
                e[0].as_str().unwrap_or_default().to_owned(),
                e[1].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    out
}

/// Sends every `query` as a log query, checking after each that lokivl is alive.
async fn log_queries_handled(
    lokivl: &mut Lokivl,
    case: &str,
    queries: &[(impl AsRef<str>, String)],
) {
    for (what, q) in queries {
        let what = what.as_ref();
        let r = log_query(&lokivl.base, q).await;
        lokivl.assert_alive(&format!("{case}/{what}"));
        assert_handled(case, what, &r);
    }
}

// ---------------------------------------------------------------------------
// 1. Unbounded recursion on input
// ---------------------------------------------------------------------------

/// `line_format` and `label_format` templates nested thousands deep
/// (parentheses, `if`, `with`, `range`): Loki answers a template parse error
/// or renders; lokivl must never overflow a worker's stack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_templates() {
    let _g = gate(1).await;
    let case = "deeply_nested_templates";
    let fake = fake::start(json_rows(20)).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let mut queries = Vec::new();
    for n in [3_000, 100_000] {
        let parens = format!("{{{{{}.app{}}}}}", "(".repeat(n), ")".repeat(n));
        let ifs = format!("{}x{}", "{{if 1}}".repeat(n), "{{end}}".repeat(n));
        let withs = format!(
            "{}{{{{.}}}}{}",
            "{{with .app}}".repeat(n),
            "{{end}}".repeat(n)
        );
        let ranges = format!(
            "{}x{}",
            "{{range $i, $c := .app}}".repeat(n),
            "{{end}}".repeat(n)
        );
        let pipes = format!("{{{{.app{}}}}}", " | printf \"%s\"".repeat(n));
        for (what, tpl) in [
            ("parens", parens),
            ("if", ifs),
            ("with", withs),
            ("range", ranges),
            ("pipes", pipes),
        ] {
            queries.push((
                format!("line_format, {what} nested {n} deep"),
                format!("{{app=\"api\"}} | json | line_format `{tpl}`"),
            ));
            if what == "parens" || what == "if" {
                queries.push((
                    format!("label_format, {what} nested {n} deep"),
                    format!("{{app=\"api\"}} | label_format x=`{tpl}`"),
                ));
            }
        }
    }
    log_queries_handled(&mut lokivl, case, &queries).await;
    lokivl.assert_survived(case, 512).await;
}

/// LogQL nested deep inside strings (regexes, templates, filters) and
/// outside them (parentheses, aggregations, label-filter groups): a parse
/// error (400) or an answer, never a crash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_logql_and_strings() {
    let _g = gate(1).await;
    let case = "deeply_nested_logql_and_strings";
    let fake = fake::start(json_rows(20)).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let n = 100_000;
    let open = "(".repeat(n);
    let close = ")".repeat(n);
    let queries: Vec<(&str, String)> = vec![
        (
            "line filter string",
            format!("{{app=\"api\"}} |= \"{open}{close}\""),
        ),
        (
            "line regex",
            format!("{{app=\"api\"}} |~ \"{open}a{close}\""),
        ),
        ("selector regex", format!("{{app=~\"{open}api{close}\"}}")),
        (
            "label regex",
            format!("{{app=\"api\"}} | json | path=~\"{open}a{close}\""),
        ),
        (
            "regexp stage",
            format!("{{app=\"api\"}} | regexp \"{open}(?P<x>a){close}\""),
        ),
        (
            "pattern stage",
            format!("{{app=\"api\"}} | pattern \"{}\"", "<_>(".repeat(n / 4)),
        ),
        (
            "label_format template",
            format!("{{app=\"api\"}} | label_format x=\"{{{{{open}.app{close}}}}}\""),
        ),
        (
            "parenthesised selector",
            format!("{open}{{app=\"api\"}}{close}"),
        ),
        (
            "label filter groups",
            format!("{{app=\"api\"}} | json | {open}level=\"info\"{close}"),
        ),
        (
            "or chains",
            format!(
                "{{app=\"api\"}} | json | level=\"a\"{}",
                " or level=\"b\"".repeat(n / 4)
            ),
        ),
        (
            "nested aggregations",
            format!(
                "{}count_over_time({{app=\"api\"}}[1m]){}",
                "sum(".repeat(20_000),
                ")".repeat(20_000)
            ),
        ),
        ("binary chain", format!("{}1", "1 + ".repeat(50_000))),
        (
            "unterminated",
            format!("{{app=\"api\"}} |= \"{}", "\\\"".repeat(n)),
        ),
    ];
    log_queries_handled(&mut lokivl, case, &queries).await;
    lokivl.assert_survived(case, 512).await;
}

/// The hostile lines: 100k levels of objects, 100k of arrays, 200k
/// unterminated levels, a `long`-byte JSON value, a logfmt value half as
/// long and a line of one word a quarter as long.
fn hostile_lines(long: usize) -> Vec<(&'static str, String)> {
    let depth = 100_000;
    vec![
        (
            "deep objects",
            format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)),
        ),
        (
            "deep arrays",
            format!("{{\"a\":{}1{}}}", "[".repeat(depth), "]".repeat(depth)),
        ),
        (
            "deep unterminated",
            format!("{{\"b\":{}", "{\"a\":[".repeat(depth)),
        ),
        (
            "long json",
            format!("{{\"level\":\"info\",\"msg\":\"{}\"}}", "j".repeat(long)),
        ),
        (
            "long logfmt",
            format!("level=info msg=\"{}\" k=v", "l".repeat(long / 2)),
        ),
        ("long word", "w".repeat(long / 4)),
    ]
}

/// The queries every hostile-line case runs: `| json`, `| logfmt`, templates
/// over the parsed fields, a metric over them, and Drilldown's detected
/// fields and patterns.
async fn query_hostile_lines(lokivl: &mut Lokivl, case: &str, start: i64, end: i64) {
    let (s, e) = (start.to_string(), end.to_string());
    let logs = [
        "{app=\"api\"}",
        "{app=\"api\"} | json",
        "{app=\"api\"} | logfmt",
        "{app=\"api\"} | json a_a_a=\"a.a.a\" | line_format \"{{.msg}} {{.a}}\"",
        "{app=\"api\"} | unpack | logfmt",
    ];
    for q in logs {
        let r = post_form(
            &format!("{}/loki/api/v1/query_range", lokivl.base),
            &[("query", q), ("start", &s), ("end", &e), ("limit", "100")],
            REQUEST_DEADLINE,
        )
        .await;
        lokivl.assert_alive(&format!("{case}: {q}"));
        assert_handled(case, q, &r);
    }
    let metrics = [
        "sum by (level) (count_over_time({app=\"api\"} | json [1m]))",
        "sum(bytes_over_time({app=\"api\"} | logfmt | line_format \"{{.msg}}\" [1m]))",
    ];
    for q in metrics {
        let r = post_form(
            &format!("{}/loki/api/v1/query_range", lokivl.base),
            &[("query", q), ("start", &s), ("end", &e), ("step", "60s")],
            REQUEST_DEADLINE,
        )
        .await;
        lokivl.assert_alive(&format!("{case}: {q}"));
        assert_handled(case, q, &r);
    }
    for path in [
        "/loki/api/v1/detected_fields",
        "/loki/api/v1/detected_field/msg/values",
        "/loki/api/v1/patterns",
    ] {
        let r = get(
            &url(
                &lokivl.base,
                path,
                &[
                    ("query", "{app=\"api\"}"),
                    ("start", &s),
                    ("end", &e),
                    ("line_limit", "1000"),
                ],
            ),
            REQUEST_DEADLINE,
        )
        .await;
        lokivl.assert_alive(&format!("{case}: {path}"));
        assert_handled(case, path, &r);
    }
}

/// Deeply nested log lines and lines of up to 8 MiB served by a fake
/// VictoriaLogs, queried with the parsers, templates, metrics and
/// Drilldown's endpoints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_and_long_lines_from_a_fake_backend() {
    let _g = gate(2).await;
    let case = "deep_and_long_lines_from_a_fake_backend";
    let lines = hostile_lines(8 << 20);
    let n = lines.len() as i64;
    let rows: Vec<(i64, String)> = lines
        .iter()
        .enumerate()
        .map(|(i, (_, l))| {
            let t = HOUR_START_NS + 60_000_000_000 * (i as i64 + 1);
            (t, row(t, "api", l, &[]))
        })
        .collect();
    let fake = fake::start(Dataset::fixed(rows)).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let probe = lokivl.probe_ready();
    query_hostile_lines(
        &mut lokivl,
        case,
        HOUR_START_NS,
        HOUR_START_NS + 60_000_000_000 * (n + 1),
    )
    .await;
    probe.assert_no_stall(case).await;
    lokivl.assert_survived(case, 768).await;
}

/// The same lines ingested into a real VictoriaLogs (its line limit raised;
/// it refuses entries over 2 MB whatever the flag, so long lines are 1.5 MiB).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_and_long_lines_in_a_real_victorialogs() {
    let Some(bin) = support::backend::find_vl_binary() else {
        println!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)");
        return;
    };
    let _g = gate(2).await;
    let case = "deep_and_long_lines_in_a_real_victorialogs";
    let vl = VictoriaLogs::start_with(&bin, &["-insert.maxLineSizeBytes=4MiB"]).await;
    let base = rows::now_ns() - 600_000_000_000;
    let lines: Vec<(i64, String)> = hostile_lines(3 << 19)
        .into_iter()
        .enumerate()
        .map(|(i, (_, l))| (base + i as i64 * 1_000_000_000, l))
        .collect();
    vl.push_lines("api", &lines).await;
    let mut lokivl = Lokivl::start(&vl.url, &[]).await;
    // VictoriaLogs kept them: the bare selector finds every line.
    let start = base - 60_000_000_000;
    let end = rows::now_ns() + 60_000_000_000;
    let a = post_form(
        &format!("{}/loki/api/v1/query_range", lokivl.base),
        &[
            ("query", "{app=\"api\"}"),
            ("start", &start.to_string()),
            ("end", &end.to_string()),
            ("limit", "100"),
        ],
        REQUEST_DEADLINE,
    )
    .await
    .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(a.status, 200, "{case}: {}", a.short());
    let got = entries(&a).len();
    assert_eq!(
        got,
        lines.len(),
        "{case}: VictoriaLogs kept {got} of the lines"
    );
    let probe = lokivl.probe_ready();
    query_hostile_lines(&mut lokivl, case, start, end).await;
    probe.assert_no_stall(case).await;
    lokivl.assert_survived(case, 1024).await;
}

// ---------------------------------------------------------------------------
// 2. Unbounded allocation and CPU in templates
// ---------------------------------------------------------------------------

/// Width, precision, repeat, indent, align and range bombs in `line_format`
/// and `label_format`: each is a template error or a bounded render, and
/// memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_bombs() {
    let _g = gate(2).await;
    let case = "template_bombs";
    let fake = fake::start(json_rows(50)).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let bombs = [
        r#"{{printf "%1000000000000d" 1}}"#,
        r#"{{printf "%-1000000000000s" .app}}"#,
        r#"{{printf "%.1000000000000f" 1.5}}"#,
        r#"{{printf "%.999999d" 7}}"#,
        r#"{{printf "%999999d%999999d%999999d%999999d" 1 2 3 4}}"#,
        r#"{{printf "%*d" 1000000000000 1}}"#,
        r#"{{repeat 1000000000000 "x"}}"#,
        r#"{{repeat 100000 (repeat 100000 "ab")}}"#,
        r#"{{indent 1000000000000 .app}}"#,
        r#"{{nindent 1000000000000 .app}}"#,
        r#"{{alignLeft 1000000000000 .app}}"#,
        r#"{{alignRight 1000000000000 .app}}"#,
        r#"{{indent 100000 (repeat 100000 "\n")}}"#,
        r#"{{range 100000000}}x{{end}}"#,
        r#"{{range 100000}}{{range 100000}}x{{end}}{{end}}"#,
        r#"{{range $i := 100000}}{{repeat 100000 "y"}}{{end}}"#,
        r#"{{trunc 1000000000000 .app}}{{substr 0 1000000000000 .app}}"#,
    ];
    let mut queries = Vec::new();
    for b in bombs {
        queries.push((
            format!("line_format {b}"),
            format!("{{app=\"api\"}} | line_format `{b}`"),
        ));
        queries.push((
            format!("label_format {b}"),
            format!("{{app=\"api\"}} | label_format bomb=`{b}`"),
        ));
    }
    let probe = lokivl.probe_ready();
    log_queries_handled(&mut lokivl, case, &queries).await;
    // And in a metric: every row of the range rendered.
    for b in bombs {
        let q = format!("sum(count_over_time({{app=\"api\"}} | line_format `{b}` [1m]))");
        let r = metric_query(&lokivl.base, &q).await;
        lokivl.assert_alive(&format!("{case}/metric {b}"));
        assert_handled(case, b, &r);
    }
    probe.assert_no_stall(case).await;
    lokivl.assert_survived(case, 512).await;
}

// ---------------------------------------------------------------------------
// Regexes at the size limit
// ---------------------------------------------------------------------------

/// Regexes at and past the compiler's size and nesting limits, in selectors,
/// line filters, label filters, `regexp` stages and `__error__` matchers (the
/// last compiled once per query, not once per row).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regexes_at_the_size_limit() {
    let _g = gate(2).await;
    let case = "regexes_at_the_size_limit";
    let fake = fake::start(json_rows(20_000)).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let alternation = (0..150_000)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join("|");
    let queries: Vec<(&str, String)> = vec![
        (
            "huge alternation",
            format!("{{app=\"api\"}} |~ \"({alternation})\""),
        ),
        (
            "huge alternation after json",
            format!("{{app=\"api\"}} | json | msg=~\"({alternation})\""),
        ),
        (
            "nested repetition selector",
            "{app=~\"((a{100}){100}){100}\"}".to_owned(),
        ),
        (
            "nested repetition label",
            "{app=\"api\"} | json | path=~\"(a{1000}){1000}\"".to_owned(),
        ),
        (
            "nested repetition line",
            "{app=\"api\"} |~ \"((x{1000}){1000}){1000}\"".to_owned(),
        ),
        (
            "catastrophic backtracking shape",
            "{app=\"api\"} |~ \"(((a*)*)*)*b\"".to_owned(),
        ),
        (
            "unicode classes",
            "{app=\"api\"} | json | msg=~\"\\\\w{1000}\\\\p{L}{1000}\"".to_owned(),
        ),
        (
            "regexp stage",
            "{app=\"api\"} | regexp \"(?P<x>(a{100}){100})\"".to_owned(),
        ),
        (
            "line_format regexReplaceAll",
            "{app=\"api\"} | line_format `{{regexReplaceAll \"(a{1000}){1000}\" .app \"b\"}}`"
                .to_owned(),
        ),
    ];
    let probe = lokivl.probe_ready();
    log_queries_handled(&mut lokivl, case, &queries).await;
    // A post-unwrap `__error__` matcher over 20,000 rows: compiled once.
    let t0 = Instant::now();
    let r = metric_query(
        &lokivl.base,
        "sum(sum_over_time({app=\"api\"} | json | unwrap status | __error__!~\"(x{100}){20}|SampleExtractionErr\" [1m]))",
    )
    .await;
    lokivl.assert_alive(case);
    assert_handled(case, "__error__ regex", &r);
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "{case}: a metric over 20,000 rows with an __error__ regex took {:?}; the regex is compiled per row",
        t0.elapsed()
    );
    probe.assert_no_stall(case).await;
    lokivl.assert_survived(case, 512).await;
}

// ---------------------------------------------------------------------------
// 3. CPU-heavy work off the async workers, deadlines
// ---------------------------------------------------------------------------

/// Rows of the CPU cases: enough that a pipeline over them takes seconds in a debug build.
const HEAVY_ROWS: usize = 100_000;

fn heavy_query(i: usize) -> String {
    format!(
        "sum by (level) (count_over_time({{app=\"api\"}} | json | line_format \"{{{{.msg}}}} {{{{.status}}}} {{{{.path}}}} q{i}\" | logfmt | line_format \"{{{{.level}}}} {{{{.msg | upper}}}}\" [1m]))"
    )
}

/// Eight concurrent CPU-heavy queries (JSON, templates and logfmt over
/// 100,000 rows each) while `/ready` and a cached answer are timed: both
/// answer within 500 ms throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_heavy_queries_leave_ready_and_cache_hits_fast() {
    let _g = gate(2).await;
    let case = "eight_heavy_queries_leave_ready_and_cache_hits_fast";
    let fake = fake::start(json_rows(HEAVY_ROWS)).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    // An answer for a closed range, now cached.
    let (s, e) = hour();
    let cached = url(
        &lokivl.base,
        "/loki/api/v1/query_range",
        &[
            ("query", "{app=\"api\"} |= \"request 7 served\""),
            ("start", &s),
            ("end", &e),
            ("limit", "5"),
        ],
    );
    let first = get(&cached, REQUEST_DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(first.status, 200, "{case}: {}", first.short());
    let again = get(&cached, REQUEST_DEADLINE).await.expect("cached answer");
    assert_eq!(again.body, first.body);

    let base = lokivl.base.clone();
    let heavy: Vec<_> = (0..8)
        .map(|i| {
            let base = base.clone();
            tokio::spawn(async move { metric_query(&base, &heavy_query(i)).await })
        })
        .collect();
    // Let them reach the row work.
    tokio::time::sleep(SEC).await;
    let probe = lokivl.probe_ready();
    let mut hits = Vec::new();
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        let r = get(&cached, Duration::from_secs(10)).await;
        hits.push(match r {
            Ok(a) if a.status == 200 && a.body == first.body => Ok(a.took),
            Ok(a) => Err(a.short()),
            Err(e) => Err(e),
        });
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let still_running = heavy.iter().filter(|h| !h.is_finished()).count();
    for h in &heavy {
        h.abort();
    }
    println!(
        "{case}: cached answer during the attack: {:?}; {still_running} of 8 heavy queries still running",
        hits.iter()
            .map(|h| h.as_ref().map(|d| d.as_millis()))
            .collect::<Vec<_>>()
    );
    probe.assert_no_stall(case).await;
    for h in &hits {
        if let Err(e) = h {
            panic!("{case}: the cached answer failed during the attack: {e}");
        }
    }
    let late: Vec<bool> = hits
        .iter()
        .map(|h| h.as_ref().is_ok_and(|d| *d > Duration::from_millis(500)))
        .collect();
    assert!(
        !late.windows(2).any(|w| w[0] && w[1]),
        "{case}: the cached answer took over 500 ms twice in a row: {hits:?}"
    );
    lokivl.assert_survived(case, 1024).await;
}

/// `--query-timeout` fires inside row work: a heavy metric query gets
/// Loki's 504 soon after the deadline, not when the rows are done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_timeout_fires_during_row_work() {
    let _g = gate(2).await;
    let case = "query_timeout_fires_during_row_work";
    let fake = fake::start(json_rows(HEAVY_ROWS)).await;
    let mut lokivl = Lokivl::start(&fake.url, &["--query-timeout", "2s"]).await;
    let template = "{{.msg}} {{.path}} {{.status | printf \\\"%05d\\\"}} ".repeat(8);
    let heavy: Vec<_> = (0..4)
        .map(|i| {
            let base = lokivl.base.clone();
            let q = format!(
                "sum(count_over_time({{app=\"api\"}} | json | line_format \"{template} q{i}\" | logfmt [1m]))"
            );
            tokio::spawn(async move { metric_query(&base, &q).await })
        })
        .collect();
    let mut timed_out = false;
    for h in heavy {
        let a = h
            .await
            .expect("query task")
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        println!("{case}: {}", a.short());
        lokivl.assert_alive(case);
        assert!(
            a.took < Duration::from_secs(6),
            "{case}: answered after {:?}, the 2 s query timeout did not fire during the row work",
            a.took
        );
        assert!(
            a.status == 504 || (a.status == 200 && a.took < Duration::from_millis(2500)),
            "{case}: {}",
            a.short()
        );
        if a.status == 504 {
            assert!(
                a.body.contains("request timed out"),
                "{case}: {}",
                a.short()
            );
            timed_out = true;
        }
    }
    if timed_out {
        // The deadline stops the work too: no CPU burnt for the lost requests.
        tokio::time::sleep(SEC).await;
        let cpu0 = lokivl.cpu_time();
        tokio::time::sleep(Duration::from_secs(3)).await;
        let burnt = lokivl.cpu_time().saturating_sub(cpu0);
        println!("{case}: {burnt:?} of CPU in 3 s, from 1 s after the 504s");
        assert!(
            burnt < Duration::from_millis(1000),
            "{case}: lokivl burnt {burnt:?} of CPU in 3 s after answering 504; the row work goes on past query_timeout"
        );
    }
    lokivl.assert_survived(case, 1024).await;
}

// ---------------------------------------------------------------------------
// 4. Cache poisoning across request shapes
// ---------------------------------------------------------------------------

/// Rows of tenant `n` (VictoriaLogs account), three distinct lines.
fn tenant_rows(n: &str) -> Dataset {
    Dataset::spread(3, HOUR_START_NS, HOUR_END_NS, |i, t| {
        row(t, "api", &format!("tenant {n} line {i}"), &[])
    })
}

/// Asserts `a` is exactly tenant `n`'s three lines, once each, without `__tenant_id__`.
fn assert_single_tenant(case: &str, what: &str, a: &Answer, n: &str) {
    assert_eq!(a.status, 200, "{case}/{what}: {}", a.short());
    let got = entries(a);
    let mut lines: Vec<&str> = got.iter().map(|(_, _, l)| l.as_str()).collect();
    lines.sort_unstable();
    let want: Vec<String> = (0..3).map(|i| format!("tenant {n} line {i}")).collect();
    assert_eq!(lines, want, "{case}/{what}: {}", a.short());
    for (stream, _, _) in &got {
        assert!(
            stream.get("__tenant_id__").is_none(),
            "{case}/{what}: a single-tenant answer carries __tenant_id__: {stream}"
        );
    }
}

/// `X-Scope-OrgID: 1|1:0` (and two map names for one VictoriaLogs tenant)
/// must not leave duplicated lines or `__tenant_id__` in the cache for `1`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_poisoning_by_duplicate_tenants() {
    let _g = gate(1).await;
    let case = "cache_poisoning_by_duplicate_tenants";
    let fake = fake::start(tenant_rows("0")).await;
    fake.set_tenant_rows("1", tenant_rows("1"));
    let map = TempFile::new(
        "tenants.yaml",
        "team-a: {account_id: 1, project_id: 0}\nteam-b: {account_id: 1}\n",
    );
    let mut lokivl = Lokivl::start(&fake.url, &["--tenant-map", map.path()]).await;
    let (s, e) = hour();
    let q = url(
        &lokivl.base,
        "/loki/api/v1/query_range",
        &[
            ("query", "{app=\"api\"}"),
            ("start", &s),
            ("end", &e),
            ("limit", "100"),
        ],
    );
    for poison in ["1|1:0", "1:0|1", "team-a|team-b", "1|team-a|1:0"] {
        let r = get_with(&q, &[("x-scope-orgid", poison)], REQUEST_DEADLINE).await;
        assert_handled(case, poison, &r);
        if let Ok(a) = &r
            && a.status == 200
        {
            // The same tenant listed twice is one tenant: each line once.
            let got = entries(a);
            let mut lines: Vec<&str> = got.iter().map(|(_, _, l)| l.as_str()).collect();
            lines.sort_unstable();
            lines.dedup();
            assert_eq!(
                lines.len(),
                got.len(),
                "{case}: {poison} answered duplicated lines: {}",
                a.short()
            );
        }
        for plain in ["1", "1:0", "team-a", "team-b"] {
            let a = get_with(&q, &[("x-scope-orgid", plain)], REQUEST_DEADLINE)
                .await
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_single_tenant(case, &format!("{plain} after {poison}"), &a, "1");
        }
    }
    lokivl.assert_survived(case, 256).await;
}

/// One row a minute over the test hour; `line` is the minute.
fn minute_rows() -> Dataset {
    Dataset::spread(60, HOUR_START_NS, HOUR_END_NS, |i, t| {
        row(t, "api", &format!("minute {i:02}"), &[])
    })
}

/// The lines of a 200 answer in answer order; `None` for a 4xx refusal.
fn lines_or_refused(case: &str, what: &str, r: &Result<Answer, String>) -> Option<Vec<String>> {
    assert_handled(case, what, r);
    let a = r.as_ref().expect("handled");
    (a.status == 200).then(|| entries(a).into_iter().map(|(_, _, l)| l).collect())
}

/// `name` given twice, `first` then `second`, and the other way round: each
/// request is answered as one of its values alone would be (the same rule
/// for both orders), or refused with a 4xx. The first order is asked first,
/// so a cache key that ignores the order hands its answer to the second.
async fn assert_duplicate_read_consistently(
    case: &str,
    base: &str,
    rest: &str,
    name: &str,
    first: &str,
    second: &str,
) {
    let ask = |tail: String| {
        let u = format!("{base}?{rest}{tail}");
        async move { get(&u, REQUEST_DEADLINE).await }
    };
    let what = |t: &str| format!("{name} {t}");
    let ab = ask(format!("&{name}={first}&{name}={second}")).await;
    let ab = lines_or_refused(case, &what("first, second"), &ab);
    let ba = ask(format!("&{name}={second}&{name}={first}")).await;
    let ba = lines_or_refused(case, &what("second, first"), &ba);
    let only_first = ask(format!("&{name}={first}")).await;
    let only_first = lines_or_refused(case, &what("first alone"), &only_first)
        .unwrap_or_else(|| panic!("{case}: {name}={first} alone was refused"));
    let only_second = ask(format!("&{name}={second}")).await;
    let only_second = lines_or_refused(case, &what("second alone"), &only_second)
        .unwrap_or_else(|| panic!("{case}: {name}={second} alone was refused"));
    assert_ne!(
        only_first, only_second,
        "{case}: the two {name} values must differ"
    );
    let first_wins = ab.as_ref().is_none_or(|l| *l == only_first)
        && ba.as_ref().is_none_or(|l| *l == only_second);
    let last_wins = ab.as_ref().is_none_or(|l| *l == only_second)
        && ba.as_ref().is_none_or(|l| *l == only_first);
    assert!(
        first_wins || last_wins,
        "{case}: {name}={first}&{name}={second} answered {} lines and {name}={second}&{name}={first} {} lines; \
         alone they answer {} and {}: the cache key and the handler read duplicates differently",
        ab.as_ref().map_or(0, Vec::len),
        ba.as_ref().map_or(0, Vec::len),
        only_first.len(),
        only_second.len()
    );
}

/// Duplicate scalar parameters and duplicate encoding-flag headers are
/// read the same way by the cache key and the handler (or refused): no
/// request gets an answer computed for another reading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_poisoning_by_duplicate_parameters() {
    let _g = gate(1).await;
    let case = "cache_poisoning_by_duplicate_parameters";
    let fake = fake::start(minute_rows()).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let base = format!("{}/loki/api/v1/query_range", lokivl.base);
    let t0 = HOUR_START_NS.to_string();
    let t30 = (HOUR_START_NS + 30 * 60_000_000_000).to_string();
    let end = HOUR_END_NS.to_string();
    let sel = "query=%7Bapp%3D%22api%22%7D";
    let rest = format!("{sel}&end={end}&limit=1000");
    assert_duplicate_read_consistently(case, &base, &rest, "start", &t30, &t0).await;
    let rest = format!("{sel}&start={t0}&end={end}");
    assert_duplicate_read_consistently(case, &base, &rest, "limit", "5", "1000").await;
    let rest = format!("{sel}&start={t0}&end={end}&limit=10");
    assert_duplicate_read_consistently(case, &base, &rest, "direction", "forward", "backward")
        .await;

    // `end` twice, live edge first: an answer read as reaching now must not
    // be kept for the closed-range TTL (the smaller `end` sorts first).
    let now = rows::now_ns();
    let min = 60_000_000_000i64;
    // Ten rows before `now - 30m`, one after: the two readings differ.
    let mut old: Vec<(i64, String)> = (0..10)
        .map(|i| {
            let t = now - (50 - i) * min;
            (t, row(t, "api", &format!("old {i}"), &[]))
        })
        .collect();
    old.push((
        now - 20 * min,
        row(now - 20 * min, "api", "old recent", &[]),
    ));
    fake.set_rows(Dataset::fixed(old));
    let live = format!(
        "{base}?{sel}&start={}&end={}&end={}&limit=1000",
        now - 60 * min,
        now + 60 * min,
        now - 30 * min
    );
    let r = get(&live, REQUEST_DEADLINE).await;
    if let Some(before) = lines_or_refused(case, "end live, closed", &r) {
        fake.set_rows(Dataset::spread(20, now - 50 * min, now - min, |i, t| {
            row(t, "api", &format!("new {i}"), &[])
        }));
        let after = get(&live, REQUEST_DEADLINE).await;
        let after =
            lines_or_refused(case, "end live, closed (again)", &after).expect("answered before");
        // Read as ending at the live edge, the request now sees the new rows;
        // read as closed, it never saw rows after `now - 30m` in the first place.
        let reads_live = before.len() == 11;
        if reads_live {
            assert!(
                after.iter().any(|l| l.starts_with("new")),
                "{case}: a live-edge answer was cached as closed: still {after:?}"
            );
        }
    }

    // `X-Loki-Response-Encoding-Flags` twice: an empty value, then the flag.
    let flags = format!("{base}?{sel}&start={t0}&end={end}&limit=7");
    let r = get_with(
        &flags,
        &[
            ("x-loki-response-encoding-flags", ""),
            ("x-loki-response-encoding-flags", "categorize-labels"),
        ],
        REQUEST_DEADLINE,
    )
    .await;
    assert_handled(case, "duplicate encoding flags", &r);
    let bare = get(&flags, REQUEST_DEADLINE).await.unwrap();
    assert_eq!(bare.status, 200, "{case}: {}", bare.short());
    assert!(
        bare.json()["data"].get("encodingFlags").is_none(),
        "{case}: a request without encoding flags got a categorized answer: {}",
        bare.short()
    );
    lokivl.assert_survived(case, 256).await;
}

/// A negative `offset` reaches past the range's end into the live edge: its
/// answer must not be kept for the closed-range TTL, so later rows show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_negative_offset_is_not_kept_as_closed() {
    let _g = gate(1).await;
    let case = "cache_negative_offset_is_not_kept_as_closed";
    let now = rows::now_ns();
    let min = 60_000_000_000i64;
    // Before: rows up to 40 minutes ago only.
    let early = Dataset::spread(60, now - 100 * min, now - 40 * min, |i, t| {
        row(t, "api", &format!("early {i}"), &[])
    });
    let fake = fake::start(early).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    // The range ended 70 minutes ago (closed), but `offset -1h` reads the
    // last 20 minutes.
    let end = now - 70 * min;
    let start = end - 10 * min;
    let q = url(
        &lokivl.base,
        "/loki/api/v1/query_range",
        &[
            (
                "query",
                "sum(bytes_over_time({app=\"api\"} | line_format \"{{.app}}\" [5m] offset -1h))",
            ),
            ("start", &start.to_string()),
            ("end", &end.to_string()),
            ("step", "60s"),
        ],
    );
    let total = |a: &Answer| -> f64 {
        assert_eq!(a.status, 200, "{case}: {}", a.short());
        a.json()["data"]["result"]
            .as_array()
            .expect("matrix")
            .iter()
            .flat_map(|s| s["values"].as_array().cloned().unwrap_or_default())
            .map(|v| v[1].as_str().unwrap_or("0").parse::<f64>().unwrap_or(0.0))
            .sum()
    };
    let before = get(&q, REQUEST_DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_handled(case, "negative offset", &Ok(before.clone()));
    if before.status != 200 {
        // Refusing negative offsets is also safe.
        lokivl.assert_survived(case, 256).await;
        return;
    }
    assert_eq!(
        total(&before),
        0.0,
        "{case}: nothing yet in the offset window"
    );
    // Late rows arrive in the last 20 minutes.
    fake.set_rows(Dataset::spread(120, now - 20 * min, now - min, |i, t| {
        row(t, "api", &format!("late {i}"), &[])
    }));
    let after = get(&q, REQUEST_DEADLINE).await.unwrap();
    assert!(
        total(&after) > 0.0,
        "{case}: the answer of a negative offset was cached as closed; late rows are hidden: {}",
        after.short()
    );
    lokivl.assert_survived(case, 256).await;
}

/// With the cache on, a POST form over 256 KiB reaches the handler whole:
/// a proper answer, not `unexpected $end`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_post_bodies_are_read_once() {
    let _g = gate(1).await;
    let case = "large_post_bodies_are_read_once";
    let fake = fake::start(minute_rows()).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let (s, e) = hour();
    // The query stays under Loki's own 128 KiB parser limit (past it Loki
    // answers `input size too long`); a field Loki ignores makes the form
    // as large as the case needs.
    let q = format!("{{app=\"api\"}} != \"{}\"", "z".repeat(100 << 10));
    for size in [300 << 10, 1 << 20, 3 << 20] {
        let pad = "p".repeat(size);
        let a = post_form(
            &format!("{}/loki/api/v1/query_range", lokivl.base),
            &[
                ("query", &q),
                ("start", &s),
                ("end", &e),
                ("limit", "1000"),
                ("pad", &pad),
            ],
            REQUEST_DEADLINE,
        )
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert!(
            !a.body.contains("unexpected $end"),
            "{case}: a {size}-byte form lost its body: {}",
            a.short()
        );
        assert_eq!(a.status, 200, "{case}: {size} bytes: {}", a.short());
        assert_eq!(entries(&a).len(), 60, "{case}: {size} bytes");
    }
    // Past the form limit: a 4xx, still not a misleading parse error.
    let q = format!("{{app=\"api\"}} != \"{}\"", "z".repeat(20 << 20));
    let r = post_form(
        &format!("{}/loki/api/v1/query_range", lokivl.base),
        &[("query", &q), ("start", &s), ("end", &e)],
        REQUEST_DEADLINE,
    )
    .await;
    match &r {
        Ok(a) => {
            assert!(
                a.status.is_client_error(),
                "{case}: 20 MiB form: {}",
                a.short()
            );
            assert!(!a.body.contains("unexpected $end"), "{case}: {}", a.short());
        }
        // Refusing by closing the connection mid-upload is acceptable.
        Err(e) => println!("{case}: 20 MiB form: {e}"),
    }
    lokivl.assert_survived(case, 512).await;
}

// ---------------------------------------------------------------------------
// 5. Live tail
// ---------------------------------------------------------------------------

/// Hundreds of tail sockets, each from its own tenant, that never read:
/// 200 idle ones (nothing to send but pings) and 12 that get 4 MiB of
/// lines at once (64 KiB each), more than the socket buffers hold, so
/// lokivl's writes block.
/// `/ready` stays fast, memory bounded, `tail_max_duration` (3 s) still ends
/// every one of them, and their slots and VictoriaLogs streams are released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_non_reading_tails() {
    let _g = gate(2).await;
    let case = "hundreds_of_non_reading_tails";
    let fake = fake::start(tenant_rows("0")).await;
    fake.set_tail(Tail::Silent);
    let blocked: Vec<String> = (1001..=1012).map(|t| t.to_string()).collect();
    for t in &blocked {
        fake.set_tail_for(
            t,
            Tail::Flood {
                opening_rows: 64,
                opening_line_bytes: 64 << 10,
                rows: 1,
                line_bytes: 100,
                every: Duration::from_millis(100),
            },
        );
    }
    let mut lokivl = Lokivl::start(
        &fake.url,
        &["--tail-max-concurrent", "1", "--tail-max-duration", "3s"],
    )
    .await;
    let opened = Instant::now();
    let mut sockets = Vec::new();
    let tenants = (1..=200)
        .map(|t| t.to_string())
        .chain(blocked.iter().cloned());
    for t in tenants {
        match ws::open_tail(&lokivl.addr, "{app=\"api\"}", &t, Some(4096)).await {
            Ok(s) => sockets.push(s),
            // A global tail cap may refuse the upgrade itself.
            Err(e) => println!("{case}: tail {t}: {e}"),
        }
    }
    println!(
        "{case}: {} non-reading tails open after {:?}",
        sockets.len(),
        opened.elapsed()
    );
    // Let the 4 MiB bursts be read, then time `/ready` while the tails sit.
    tokio::time::sleep(SEC).await;
    let probe = lokivl.probe_ready();
    tokio::time::sleep(Duration::from_secs(2)).await;
    probe.assert_no_stall(case).await;
    lokivl.assert_alive(case);
    // Past tail_max_duration, with room for a write timeout.
    tokio::time::sleep(Duration::from_secs(12).saturating_sub(opened.elapsed())).await;
    let still = fake.open_tails();
    println!(
        "{case}: {still} VictoriaLogs tails open after {:?}",
        opened.elapsed()
    );
    // A new tail of a blocked tenant (limit 1 per tenant) is accepted: the
    // stuck session let go of its slot.
    let mut fresh = ws::open_tail(&lokivl.addr, "{app=\"api\"}", &blocked[0], None)
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let m = ws::first_message(&mut fresh, Duration::from_secs(5)).await;
    assert!(
        matches!(m, Ok(Message::Text(_))),
        "{case}: a new tail of tenant {} after its stuck tail passed tail_max_duration: {m:?}",
        blocked[0]
    );
    assert!(
        still == 0,
        "{case}: {still} VictoriaLogs tails still open {:?} after non-reading clients passed tail_max_duration",
        opened.elapsed()
    );
    drop(sockets);
    lokivl.assert_survived(case, 512).await;
}

/// VictoriaLogs sends one line that never ends: lokivl bounds what it
/// buffers for a tail instead of growing without limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_tail_line_is_bounded() {
    let _g = gate(2).await;
    let case = "endless_tail_line_is_bounded";
    let fake = fake::start(tenant_rows("0")).await;
    fake.set_tail(Tail::EndlessLine {
        chunk_bytes: 512 << 10,
        every: Duration::from_millis(5),
    });
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let mut sockets = Vec::new();
    for t in 0..3 {
        let s = ws::open_tail(&lokivl.addr, "{app=\"api\"}", &t.to_string(), None)
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        sockets.push(s);
    }
    let probe = lokivl.probe_ready();
    tokio::time::sleep(Duration::from_secs(4)).await;
    probe.assert_no_stall(case).await;
    println!("{case}: lokivl RSS now {} MiB", lokivl.rss() >> 20);
    drop(sockets);
    lokivl.assert_survived(case, 256).await;
}

/// Clients send huge WebSocket messages into tails, as fragments under
/// the frame limit: lokivl refuses them early instead of buffering up to
/// axum's 64 MiB message default each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_inbound_tail_messages_are_refused() {
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    let _g = gate(2).await;
    let case = "huge_inbound_tail_messages_are_refused";
    let fake = fake::start(tenant_rows("0")).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let fragment = bytes::Bytes::from(vec![b'm'; 4 << 20]);
    let mut sends = Vec::new();
    for t in 0..4 {
        let mut s = ws::open_tail(&lokivl.addr, "{app=\"api\"}", &t.to_string(), None)
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let fragment = fragment.clone();
        sends.push(tokio::spawn(async move {
            // 15 fragments of 4 MiB: one 60 MiB message, never finished.
            let mut sent = 0usize;
            for i in 0..15 {
                let op = if i == 0 {
                    OpCode::Data(Data::Binary)
                } else {
                    OpCode::Data(Data::Continue)
                };
                let frame = Frame::message(fragment.clone(), op, false);
                match tokio::time::timeout(Duration::from_secs(10), s.send(Message::Frame(frame)))
                    .await
                {
                    Ok(Ok(())) => sent += fragment.len(),
                    _ => break,
                }
            }
            // Keep the socket open while lokivl would hold the fragments.
            tokio::time::sleep(Duration::from_secs(2)).await;
            drop(s);
            sent
        }));
    }
    for s in sends {
        let sent = s.await.expect("sender");
        println!("{case}: {} MiB of one message sent", sent >> 20);
    }
    lokivl.assert_survived(case, 160).await;
}

// ---------------------------------------------------------------------------
// 6. Amplification and hygiene
// ---------------------------------------------------------------------------

/// A `query_range` cut into 43,200 windows (30 days by 1 minute), log and
/// metric, abandoned by its client after 1.5 s: lokivl stays ready and
/// bounded, and stops calling VictoriaLogs for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_windows() {
    let _g = gate(1).await;
    let case = "thousands_of_windows";
    let fake = fake::start(Dataset::empty()).await;
    let mut lokivl = Lokivl::start(&fake.url, &["--split-queries-by-interval", "1m"]).await;
    let end = rows::now_ns() - 3_600_000_000_000;
    let start = end - 30 * 24 * 3_600_000_000_000;
    let probe = lokivl.probe_ready();
    for (what, query, extra) in [
        ("log", "{app=\"api\"} |= \"nothing\"", ("limit", "100")),
        (
            "metric",
            "sum(bytes_over_time({app=\"api\"} | line_format \"{{.app}}\" [1m]))",
            ("step", "300s"),
        ),
    ] {
        let u = url(
            &lokivl.base,
            "/loki/api/v1/query_range",
            &[
                ("query", query),
                ("start", &start.to_string()),
                ("end", &end.to_string()),
                extra,
            ],
        );
        let r = get(&u, Duration::from_millis(1500)).await;
        println!("{case}/{what}: {:?}", r.as_ref().map(Answer::short));
        if let Ok(a) = &r {
            assert!(
                a.status == 200 || a.status.is_client_error(),
                "{case}/{what}: {}",
                a.short()
            );
        }
        assert_calls_stop(case, what, &fake).await;
        lokivl.assert_alive(case);
    }
    probe.assert_no_stall(case).await;
    lokivl.assert_survived(case, 512).await;
}

/// Fails when VictoriaLogs keeps getting calls 1 s after the client left:
/// more than a few stragglers over the next 2 s.
async fn assert_calls_stop(case: &str, what: &str, fake: &FakeVl) {
    tokio::time::sleep(SEC).await;
    let settled = fake::calls(fake);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = fake::calls(fake);
    println!(
        "{case}/{what}: {settled} VictoriaLogs calls 1 s after the client left, {later} 2 s later"
    );
    assert!(
        later - settled <= 4,
        "{case}/{what}: {} more VictoriaLogs calls after the client left; the work goes on without it",
        later - settled
    );
}

/// Rows every `period_ns`: `a=1`, which `| logfmt | a="2"` never keeps.
fn periodic_rows(period_ns: i64) -> Dataset {
    let make: rows::MakeRow = std::sync::Arc::new(|t| {
        format!(
            r#"{{"_time":"{}","_stream_id":"s","_stream":"{{app=\"api\"}}","_msg":"a=1","app":"api"}}"#,
            rows::rfc3339(t)
        )
    });
    Dataset::Periodic {
        period_ns,
        make,
        max_per_call: 600_000,
    }
}

/// Windows of a log query whose pipeline keeps nothing page through their
/// rows; when the client leaves, those window fills stop too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_window_fills_stop() {
    let _g = gate(2).await;
    let case = "abandoned_window_fills_stop";
    // 36,000 rows per one-hour window: 36 pages each.
    let fake = fake::start_with(periodic_rows(100_000_000), true).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let end = HOUR_END_NS;
    let start = end - 24 * 3_600_000_000_000;
    let u = url(
        &lokivl.base,
        "/loki/api/v1/query_range",
        &[
            ("query", "{app=\"api\"} | logfmt | a=\"2\""),
            ("start", &start.to_string()),
            ("end", &end.to_string()),
            ("limit", "100"),
        ],
    );
    let r = get(&u, Duration::from_millis(1500)).await;
    println!("{case}: {:?}", r.as_ref().map(Answer::short));
    assert_calls_stop(case, "24 windows", &fake).await;
    lokivl.assert_survived(case, 512).await;
}

/// The row budget (500,000 rows read) holds per query, not per window: a
/// pipeline that keeps nothing over 24 one-hour windows of 22,500 rows each
/// (540,000 in all) reads at most the budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_budget_spans_all_windows() {
    let _g = gate(2).await;
    let case = "row_budget_spans_all_windows";
    let fake = fake::start_with(periodic_rows(160_000_000), false).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let end = HOUR_END_NS;
    let start = end - 24 * 3_600_000_000_000;
    let r = post_form(
        &format!("{}/loki/api/v1/query_range", lokivl.base),
        &[
            ("query", "{app=\"api\"} | logfmt | a=\"2\""),
            ("start", &start.to_string()),
            ("end", &end.to_string()),
            ("limit", "100"),
        ],
        Duration::from_secs(90),
    )
    .await;
    let served = fake.rows_served();
    println!(
        "{case}: {served} rows read; {:?}",
        r.as_ref().map(Answer::short)
    );
    lokivl.assert_alive(case);
    assert_handled(case, "24 windows", &r);
    assert!(
        served <= 505_000,
        "{case}: {served} rows read for one query; the 500,000-row budget is per window"
    );
    lokivl.assert_survived(case, 512).await;
}

/// `X-Scope-OrgID` with 10,000 members: bounded, not 10,000 serial calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_member_count_is_bounded() {
    let _g = gate(1).await;
    let case = "fan_out_member_count_is_bounded";
    let fake = fake::start(tenant_rows("0")).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let members = (1..=10_000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("|");
    let (s, e) = hour();
    let probe = lokivl.probe_ready();
    let r = get_with(
        &url(
            &lokivl.base,
            "/loki/api/v1/query_range",
            &[
                ("query", "{app=\"api\"}"),
                ("start", &s),
                ("end", &e),
                ("limit", "10"),
            ],
        ),
        &[("x-scope-orgid", &members)],
        REQUEST_DEADLINE,
    )
    .await;
    let calls = fake::calls(&fake);
    println!(
        "{case}: {calls} VictoriaLogs calls; {:?}",
        r.as_ref().map(Answer::short)
    );
    probe.assert_no_stall(case).await;
    assert_handled(case, "10,000 tenants", &r);
    assert!(
        calls < 10_000,
        "{case}: one VictoriaLogs call per member ({calls}); the member count is unbounded"
    );
    lokivl.assert_survived(case, 512).await;
}

/// `series` with 5,000 `match[]`: not one VictoriaLogs call per matcher.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn series_with_many_matchers_is_bounded() {
    let _g = gate(1).await;
    let case = "series_with_many_matchers_is_bounded";
    let fake = fake::start(tenant_rows("0")).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let (s, e) = hour();
    // 5,000 matchers, a form under 256 KiB.
    let matchers: Vec<String> = (0..5_000).map(|i| format!("{{app=\"a{i}\"}}")).collect();
    let mut pairs: Vec<(&str, &str)> = matchers.iter().map(|m| ("match[]", m.as_str())).collect();
    pairs.push(("start", &s));
    pairs.push(("end", &e));
    let probe = lokivl.probe_ready();
    let r = post_form(
        &format!("{}/loki/api/v1/series", lokivl.base),
        &pairs,
        REQUEST_DEADLINE,
    )
    .await;
    let calls = fake::calls(&fake);
    println!(
        "{case}: {calls} VictoriaLogs calls; {:?}",
        r.as_ref().map(Answer::short)
    );
    probe.assert_no_stall(case).await;
    assert_handled(case, "5,000 matchers", &r);
    assert!(
        calls < 5_000,
        "{case}: one VictoriaLogs call per match[] ({calls})"
    );
    lokivl.assert_survived(case, 512).await;
}

/// One tenant's slow queries time out; the circuit breaker must not open
/// for every tenant (and `/ready` stays 200).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_tenant_does_not_open_the_breaker_for_others() {
    let _g = gate(1).await;
    let case = "slow_tenant_does_not_open_the_breaker_for_others";
    let fake = fake::start(tenant_rows("0")).await;
    fake.set_tenant_rows("1", tenant_rows("1"));
    fake.slow_account("7", Duration::from_secs(5));
    let mut lokivl = Lokivl::start(
        &fake.url,
        &[
            "--backend-timeout",
            "1s",
            "--breaker-failures",
            "3",
            "--breaker-cooldown",
            "60s",
        ],
    )
    .await;
    let (s, e) = hour();
    let slow: Vec<_> = (0..6)
        .map(|i| {
            let u = url(
                &lokivl.base,
                "/loki/api/v1/query_range",
                &[
                    ("query", &format!("{{app=\"api\"}} != \"slow {i}\"")),
                    ("start", &s),
                    ("end", &e),
                ],
            );
            tokio::spawn(
                async move { get_with(&u, &[("x-scope-orgid", "7")], REQUEST_DEADLINE).await },
            )
        })
        .collect();
    for h in slow {
        let r = h.await.expect("slow query");
        println!("{case}: tenant 7: {:?}", r.as_ref().map(Answer::short));
    }
    let a = get_with(
        &url(
            &lokivl.base,
            "/loki/api/v1/query_range",
            &[("query", "{app=\"api\"}"), ("start", &s), ("end", &e)],
        ),
        &[("x-scope-orgid", "1")],
        REQUEST_DEADLINE,
    )
    .await
    .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_single_tenant(case, "tenant 1 after tenant 7 timed out", &a, "1");
    lokivl.assert_survived(case, 256).await;
}

/// Field names and stream values with multi-byte characters in every
/// position: no panic from slicing inside a character.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multibyte_names_do_not_panic() {
    let _g = gate(1).await;
    let case = "multibyte_names_do_not_panic";
    let names = ["é", "aé", "éa", "日本", "🦀", "x🦀y"];
    let mut rs = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let t = HOUR_START_NS + (i as i64 + 1) * 60_000_000_000;
        let mut obj = serde_json::Map::new();
        obj.insert("_time".into(), rows::rfc3339(t).into());
        obj.insert("_stream_id".into(), format!("s{i}").into());
        obj.insert(
            "_stream".into(),
            format!("{{app=\"a{n}é\",{n}=\"{n}\"}}").into(),
        );
        obj.insert("_msg".into(), format!("{n}={n} {{\"{n}\":\"{n}\"}}").into());
        obj.insert("app".into(), format!("a{n}é").into());
        obj.insert((*n).into(), (*n).into());
        obj.insert(format!("{n}é"), "1".into());
        obj.insert("é".into(), "2".into());
        rs.push((t, serde_json::Value::Object(obj).to_string()));
    }
    let fake = fake::start(Dataset::fixed(rs)).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let queries: Vec<(&str, String)> = vec![
        ("bare", "{app=~\"a.*\"}".to_owned()),
        (
            "line_format",
            "{app=~\"a.*\"} | line_format \"{{.app}}\"".to_owned(),
        ),
        ("logfmt", "{app=~\"a.*\"} | logfmt".to_owned()),
        ("json", "{app=~\"a.*\"} | json".to_owned()),
        ("drop", "{app=~\"a.*\"} | drop é".to_owned()),
    ];
    log_queries_handled(&mut lokivl, case, &queries).await;
    let r = metric_query(
        &lokivl.base,
        "sum by (app) (count_over_time({app=~\"a.*\"} | line_format \"{{.app}}\" [1m]))",
    )
    .await;
    assert_handled(case, "metric", &r);
    let (s, e) = hour();
    let r = get(
        &url(
            &lokivl.base,
            "/loki/api/v1/detected_fields",
            &[("query", "{app=~\"a.*\"}"), ("start", &s), ("end", &e)],
        ),
        REQUEST_DEADLINE,
    )
    .await;
    assert_handled(case, "detected_fields", &r);
    lokivl.assert_survived(case, 256).await;
}

/// Times and steps near `i64::MAX` nanoseconds: a 4xx or an answer, never
/// an overflow (debug builds panic on it; release builds would wrap).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extreme_times_and_steps_do_not_overflow() {
    let _g = gate(1).await;
    let case = "extreme_times_and_steps_do_not_overflow";
    let fake = fake::start(tenant_rows("0")).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    let max = i64::MAX.to_string();
    let near = (i64::MAX - 1_000_000_000).to_string();
    let min = i64::MIN.to_string();
    let metric = "sum(count_over_time({app=\"api\"}[5m]))";
    let proxied = "sum(count_over_time({app=\"api\"} | line_format \"x\" [5m] offset -5m))";
    let mut requests: Vec<(String, Vec<(&str, &str)>)> = Vec::new();
    for q in [metric, proxied, "{app=\"api\"}"] {
        for (start, end, step) in [
            (near.as_str(), max.as_str(), "1"),
            (near.as_str(), max.as_str(), "9223372036"),
            (min.as_str(), max.as_str(), "9223372036"),
            (min.as_str(), near.as_str(), "1000000000"),
            ("0", max.as_str(), "922337203"),
            (max.as_str(), max.as_str(), "1"),
        ] {
            requests.push((
                "/loki/api/v1/query_range".to_owned(),
                vec![("query", q), ("start", start), ("end", end), ("step", step)],
            ));
        }
        for time in [max.as_str(), min.as_str(), near.as_str()] {
            requests.push((
                "/loki/api/v1/query".to_owned(),
                vec![("query", q), ("time", time)],
            ));
        }
    }
    requests.push((
        "/loki/api/v1/query_range".to_owned(),
        vec![
            ("query", "sum(rate({app=\"api\"}[5m] offset 2562047h))"),
            ("start", "1"),
            ("end", "2"),
        ],
    ));
    for (path, params) in &requests {
        let r = get(&url(&lokivl.base, path, params), REQUEST_DEADLINE).await;
        lokivl.assert_alive(&format!("{case}: {path} {params:?}"));
        assert_handled(case, &format!("{path} {params:?}"), &r);
    }
    lokivl.assert_survived(case, 256).await;
}

/// A backend URL with `user:password@` never shows the password in answers,
/// `/ready` or logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backend_credentials_are_not_echoed() {
    let _g = gate(1).await;
    let case = "backend_credentials_are_not_echoed";
    let secret = "s3cr3t-pa55";
    let fake = fake::start(tenant_rows("0")).await;
    fake.fail_queries(axum::http::StatusCode::INTERNAL_SERVER_ERROR, "boom");
    let with_creds = fake
        .url
        .replace("http://", &format!("http://lokivl:{secret}@"));
    let mut lokivl = match Lokivl::try_start(&with_creds, &["--log-level", "debug"]).await {
        Ok(l) => l,
        // Refusing credentials in the URL at startup is fine, if the
        // refusal does not print them.
        Err(stderr) => {
            assert!(
                !stderr.contains(secret),
                "{case}: startup error shows the password: {stderr}"
            );
            return;
        }
    };
    lokivl.assert_ready(case).await;
    let (s, e) = hour();
    let q = url(
        &lokivl.base,
        "/loki/api/v1/query_range",
        &[("query", "{app=\"api\"}"), ("start", &s), ("end", &e)],
    );
    let a = get(&q, REQUEST_DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(
        !a.body.contains(secret),
        "{case}: the answer shows the password: {}",
        a.short()
    );
    lokivl.assert_survived(case, 256).await;
    assert!(
        !lokivl.stderr().contains(secret),
        "{case}: the log shows the password"
    );
    // Unreachable: the connection error and `/ready` must not show it either.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut down = Lokivl::start_unready(
        &format!("http://lokivl:{secret}@127.0.0.1:{port}"),
        &["--log-level", "debug"],
    )
    .await;
    let q = url(
        &down.base,
        "/loki/api/v1/query_range",
        &[("query", "{app=\"api\"}"), ("start", &s), ("end", &e)],
    );
    let a = get(&q, REQUEST_DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(
        !a.body.contains(secret),
        "{case}: the answer shows the password: {}",
        a.short()
    );
    let ready = get(&format!("{}/ready", down.base), REQUEST_DEADLINE)
        .await
        .unwrap();
    assert!(
        !ready.body.contains(secret),
        "{case}: /ready shows the password: {}",
        ready.short()
    );
    down.assert_alive(case);
    assert!(
        !down.stderr().contains(secret),
        "{case}: the log shows the password"
    );
}

/// A VictoriaLogs answer past `--backend-max-response-bytes` is Loki's 4xx
/// limit error, not a 502.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_backend_answers_are_a_4xx() {
    let _g = gate(1).await;
    let case = "oversized_backend_answers_are_a_4xx";
    let fake = fake::start(Dataset::spread(4000, HOUR_START_NS, HOUR_END_NS, |i, t| {
        row(t, "api", &format!("{i} {}", "p".repeat(2000)), &[])
    }))
    .await;
    let mut lokivl = Lokivl::start(&fake.url, &["--backend-max-response-bytes", "1048576"]).await;
    for (what, r) in [
        (
            "log query",
            log_query(&lokivl.base, "{app=\"api\"} | line_format \"{{.app}}\"").await,
        ),
        (
            "metric from rows",
            metric_query(
                &lokivl.base,
                "sum(count_over_time({app=\"api\"} | line_format \"{{.app}}\" [1h]))",
            )
            .await,
        ),
    ] {
        let a = r.unwrap_or_else(|e| panic!("{case}/{what}: {e}"));
        println!("{case}/{what}: {}", a.short());
        assert!(
            a.status == 200 || a.status.is_client_error(),
            "{case}/{what}: expected Loki's 4xx limit error, got {}",
            a.short()
        );
    }
    lokivl.assert_survived(case, 256).await;
}

/// Clients that trickle their headers, and hundreds of idle keep-alive
/// connections: `/ready` stays fast, memory bounded, and a trickling
/// client is cut off by a header read timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_and_idle_connections() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    // Mostly waiting: no run permit, so it overlaps the other cases.
    let case = "slow_headers_and_idle_connections";
    let fake = fake::start(tenant_rows("0")).await;
    let mut lokivl = Lokivl::start(&fake.url, &[]).await;
    // Idle keep-alive connections after one request each.
    let mut idle = Vec::new();
    for _ in 0..500 {
        let mut s = tokio::net::TcpStream::connect(&lokivl.addr).await.unwrap();
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 1024];
        let _ = tokio::time::timeout(SEC, s.read(&mut buf)).await;
        idle.push(s);
    }
    // Idle connections that never send a byte.
    for _ in 0..300 {
        idle.push(tokio::net::TcpStream::connect(&lokivl.addr).await.unwrap());
    }
    // Tricklers: one header byte every 200 ms, forever.
    let started = Instant::now();
    let tricklers: Vec<_> = (0..100)
        .map(|_| {
            let addr = lokivl.addr.clone();
            tokio::spawn(async move {
                let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
                s.write_all(b"GET /ready HTTP/1.1\r\nHost: x\r\n")
                    .await
                    .unwrap();
                loop {
                    if s.write_all(b"X").await.is_err() {
                        return Instant::now();
                    }
                    // A closed connection shows as EOF on read.
                    let mut b = [0u8; 256];
                    let read =
                        tokio::time::timeout(Duration::from_millis(200), s.read(&mut b)).await;
                    if let Ok(Ok(0) | Err(_)) = read {
                        return Instant::now();
                    }
                }
            })
        })
        .collect();
    let probe = lokivl.probe_ready();
    tokio::time::sleep(Duration::from_secs(3)).await;
    probe.assert_no_stall(case).await;
    lokivl.assert_survived(case, 256).await;
    // Every trickler is cut off within 45 s (hyper's own default is 30 s).
    let cut = tokio::time::timeout(Duration::from_secs(45), async {
        let mut last = Duration::ZERO;
        for t in tricklers {
            last = last.max(t.await.expect("trickler").duration_since(started));
        }
        last
    })
    .await;
    match cut {
        Ok(last) => println!("{case}: the last trickling client was cut off after {last:?}"),
        Err(_) => panic!("{case}: clients trickling headers were still connected after 45 s"),
    }
    drop(idle);
    lokivl.assert_survived(case, 256).await;
}

// ---------------------------------------------------------------------------
// 7. Trust model
// ---------------------------------------------------------------------------

/// `--require-tenant-header` refuses requests without `X-Scope-OrgID`, and
/// `--tenant-numeric=false` refuses numeric tenants outside the map, as
/// Loki refuses a missing org id (401).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_flags_refuse_unmapped_tenants() {
    let _g = gate(1).await;
    let case = "trust_flags_refuse_unmapped_tenants";
    let fake = fake::start(tenant_rows("0")).await;
    fake.set_tenant_rows("1", tenant_rows("1"));
    let map = TempFile::new("trust.yaml", "team-a: {account_id: 1}\n");
    let mut lokivl = Lokivl::start(
        &fake.url,
        &[
            "--tenant-map",
            map.path(),
            "--require-tenant-header",
            "--tenant-numeric=false",
        ],
    )
    .await;
    let (s, e) = hour();
    let q = url(
        &lokivl.base,
        "/loki/api/v1/query_range",
        &[("query", "{app=\"api\"}"), ("start", &s), ("end", &e)],
    );
    let none = get(&q, REQUEST_DEADLINE).await.unwrap();
    assert_eq!(
        none.status,
        401,
        "{case}: no X-Scope-OrgID: {}",
        none.short()
    );
    let numeric = get_with(&q, &[("x-scope-orgid", "1")], REQUEST_DEADLINE)
        .await
        .unwrap();
    assert_eq!(
        numeric.status,
        401,
        "{case}: numeric tenant: {}",
        numeric.short()
    );
    let mapped = get_with(&q, &[("x-scope-orgid", "team-a")], REQUEST_DEADLINE)
        .await
        .unwrap();
    assert_single_tenant(case, "mapped tenant", &mapped, "1");
    lokivl.assert_survived(case, 256).await;
}

//! Bad requests compared with a real Loki: status and the whole error text.
//!
//! The cases are malformed requests Grafana, logcli and scripts send (bad
//! times, limits, steps and directions, LogQL parse and validation errors,
//! bad regexes, limits on range and points). lokivl runs in front of a
//! closed port, so a case it wrongly accepts shows as a 502/503. Live
//! (`LOKIVL_LOKI_BIN` or `loki` on PATH), Loki's answers are compared and,
//! with `LOKIVL_RECORD_GOLDEN=1`, recorded to `tests/golden/errors/loki.json`;
//! without Loki the recorded answers are the reference, so this runs in CI.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::support::client::{self, url};
use crate::support::loki::{self, Loki};
use serde::{Deserialize, Serialize};

/// 2026-08-22T09:00:00Z and 10:00:00Z: fixed, so recordings replay.
const START: &str = "1787389200";
const END: &str = "1787392800";

/// Loki's recorded answer to one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Recorded {
    request: String,
    status: u16,
    body: String,
}

/// Query parameters of one case.
type Params = Vec<(&'static str, &'static str)>;

/// `(id, path, params)` per case.
fn cases() -> Vec<(&'static str, &'static str, Params)> {
    let qr = "/loki/api/v1/query_range";
    let q = "/loki/api/v1/query";
    let sel = r#"{app="api"}"#;
    let rate = r#"sum(rate({app="api"}[5m]))"#;
    let range = |query: &'static str| vec![("query", query), ("start", START), ("end", END)];
    let with = |mut base: Vec<(&'static str, &'static str)>,
                extra: &[(&'static str, &'static str)]| {
        base.extend_from_slice(extra);
        base
    };
    vec![
        // Times, limits, steps, directions.
        (
            "time.start_word",
            qr,
            vec![("query", sel), ("start", "abc"), ("end", END)],
        ),
        (
            "time.end_exp",
            qr,
            vec![("query", sel), ("start", START), ("end", "1e")],
        ),
        (
            "time.date_only",
            qr,
            vec![("query", sel), ("start", "2026-08-22"), ("end", END)],
        ),
        (
            "time.reversed",
            qr,
            vec![("query", sel), ("start", END), ("end", START)],
        ),
        (
            "time.instant_word",
            q,
            vec![("query", rate), ("time", "soon")],
        ),
        ("limit.negative", qr, with(range(sel), &[("limit", "-1")])),
        ("limit.zero", qr, with(range(sel), &[("limit", "0")])),
        ("limit.word", qr, with(range(sel), &[("limit", "ten")])),
        ("limit.huge", qr, with(range(sel), &[("limit", "100000")])),
        ("step.zero", qr, with(range(rate), &[("step", "0")])),
        ("step.negative", qr, with(range(rate), &[("step", "-5")])),
        ("step.word", qr, with(range(rate), &[("step", "fast")])),
        ("step.too_small", qr, with(range(rate), &[("step", "0.1")])),
        (
            "step.duration_too_small",
            qr,
            with(range(rate), &[("step", "100ms")]),
        ),
        (
            "dir.sideways",
            qr,
            with(range(sel), &[("direction", "sideways")]),
        ),
        (
            "interval.word",
            qr,
            with(range(sel), &[("interval", "often")]),
        ),
        (
            "range.too_long",
            qr,
            vec![("query", sel), ("start", "1784700000"), ("end", END)],
        ),
        // LogQL parse and validation errors.
        ("logql.missing", qr, vec![("start", START), ("end", END)]),
        ("logql.unclosed", qr, range(r#"{app="api""#)),
        ("logql.empty_selector", qr, range("{}")),
        ("logql.match_all", qr, range(r#"{app=~".*"}"#)),
        ("logql.bad_regex", qr, range(r#"{app="api"} |~ "(""#)),
        ("logql.bad_matcher_regex", qr, range(r#"{app=~"("}"#)),
        ("logql.no_range", qr, range(r#"rate({app="api"})"#)),
        (
            "logql.unknown_fn",
            qr,
            range(r#"foo_over_time({app="api"}[5m])"#),
        ),
        (
            "logql.count_by",
            qr,
            range(r#"count_over_time({app="api"}[5m]) by (x)"#),
        ),
        (
            "logql.unwrap_no_label",
            qr,
            range(r#"sum_over_time({app="api"} | unwrap [5m])"#),
        ),
        (
            "logql.topk_word",
            qr,
            range(r#"topk(x, rate({app="api"}[5m]))"#),
        ),
        ("logql.bad_duration", qr, range(r#"rate({app="api"}[5x])"#)),
        ("logql.pipe_only", qr, range(r#"| json"#)),
        (
            "logql.bad_label_fmt",
            qr,
            range(r#"{app="api"} | label_format a="{{.b""#),
        ),
        ("logql.log_instant", q, vec![("query", sel), ("time", END)]),
        (
            "logql.bad_ip",
            qr,
            range(r#"{app="api"} |= ip("300.1.1.1")"#),
        ),
        (
            "logql.bad_pattern",
            qr,
            range(r#"{app="api"} | pattern "<_>""#),
        ),
        (
            "logql.bad_line_fmt",
            qr,
            range(r#"{app="api"} | line_format "{{.b""#),
        ),
        (
            "logql.bad_regexp_parser",
            qr,
            range(r#"{app="api"} | regexp "(""#),
        ),
        (
            "logql.regexp_no_group",
            qr,
            range(r#"{app="api"} | regexp "abc""#),
        ),
        (
            "logql.bad_ip_label",
            qr,
            range(r#"{app="api"} | logfmt | addr = ip("x")"#),
        ),
        (
            "logql.bad_json_path",
            qr,
            range(r#"{app="api"} | json a="b[""#),
        ),
        (
            "logql.bad_drop_regex",
            qr,
            range(r#"{app="api"} | drop a=~"(""#),
        ),
        (
            "logql.bad_label_regex",
            qr,
            range(r#"{app="api"} | logfmt | a=~"(""#),
        ),
        (
            "logql.pattern_bad_name",
            qr,
            range(r#"{app="api"} | pattern "<a-b> x""#),
        ),
        (
            "logql.metric_bad_ip",
            qr,
            range(r#"sum(count_over_time({app="api"} |= ip("x") [5m]))"#),
        ),
        (
            "logql.pattern_filter_named",
            qr,
            range(r#"{app="api"} |> "<a> x""#),
        ),
        (
            "logql.pattern_consecutive",
            qr,
            range(r#"{app="api"} | pattern "<a><b>""#),
        ),
        (
            "logql.regexp_dup_name",
            qr,
            range(r#"{app="api"} | regexp "(?P<a>x)(?P<a>y)""#),
        ),
        // Loki's expected-token tails.
        (
            "logql.tail_without_paren",
            qr,
            range(r#"sum without ( (rate({app="api"}[1m]))"#),
        ),
        ("logql.tail_by_end", qr, range("sum by (x")),
        (
            "logql.tail_on_end",
            qr,
            range(r#"sum(rate({app="api"}[1m])) / on"#),
        ),
        (
            "logql.tail_binary_end",
            qr,
            range(r#"sum(rate({app="api"}[1m])) +"#),
        ),
        (
            "logql.tail_line_filter",
            qr,
            range(r#"{app="api"} |= "x" or"#),
        ),
        (
            "logql.tail_label_filter",
            qr,
            range(r#"{app="api"} | json | x="1" or"#),
        ),
        (
            "logql.tail_label_format",
            qr,
            range(r#"{app="api"} | label_format x="#),
        ),
        ("logql.tail_drop", qr, range(r#"{app="api"} | drop x,"#)),
        ("logql.tail_range", qr, range(r#"rate({app="api"}[1m]"#)),
        (
            "logql.tail_offset",
            qr,
            range(r#"rate({app="api"}[1m] offset"#),
        ),
        ("logql.tail_quantile", qr, range("quantile_over_time(0.99,")),
        (
            "logql.tail_unwrap_conv",
            qr,
            range(r#"sum_over_time({app="api"} | unwrap bytes(x) ( [5m])"#),
        ),
        // Metadata endpoints.
        (
            "labels.reversed",
            "/loki/api/v1/labels",
            vec![("start", END), ("end", START)],
        ),
        (
            "values.reversed",
            "/loki/api/v1/label/app/values",
            vec![("start", END), ("end", START)],
        ),
        (
            "labels.bad_start",
            "/loki/api/v1/labels",
            vec![("start", "x"), ("end", END)],
        ),
        (
            "values.bad_query",
            "/loki/api/v1/label/app/values",
            vec![("query", r#"{app="#), ("start", START), ("end", END)],
        ),
        (
            "series.bad_match",
            "/loki/api/v1/series",
            vec![("match[]", r#"{app="#), ("start", START), ("end", END)],
        ),
        (
            "series.reversed",
            "/loki/api/v1/series",
            vec![("match[]", sel), ("start", END), ("end", START)],
        ),
    ]
}

/// `(id, path, raw query string)` per case whose query carries bytes
/// that are not UTF-8 (`%FF`), which `url` cannot build from a `&str`.
fn raw_cases() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        (
            "utf8.query_range",
            "/loki/api/v1/query_range",
            "query=%7Bapp%3D%22%FF%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.query_range_line_filter",
            "/loki/api/v1/query_range",
            "query=%7Bapp%3D%22api%22%7D%20%7C%3D%20%22a%FF%22&start=1787389200&end=1787392800",
        ),
        (
            "utf8.query_range_label_name",
            "/loki/api/v1/query_range",
            "query=%7Bap%FF%3D%22api%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.query_range_after_space",
            "/loki/api/v1/query_range",
            "query=%7Bapp%3D%22api%22%7D%20%FF&start=1787389200&end=1787392800",
        ),
        (
            "utf8.syntax_error_first",
            "/loki/api/v1/query_range",
            "query=%7Bapp%3D%22api%22%7D%7D%20%22%FF%22&start=1787389200&end=1787392800",
        ),
        (
            "utf8.bad_start_first",
            "/loki/api/v1/query_range",
            "query=%7Bapp%3D%22%FF%22%7D&start=abc&end=1787392800",
        ),
        (
            "utf8.instant",
            "/loki/api/v1/query",
            "query=count_over_time(%7Bapp%3D%22%FF%22%7D%5B1m%5D)&time=1787392800",
        ),
        (
            "utf8.labels",
            "/loki/api/v1/labels",
            "query=%7Bapp%3D%22%FF%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.values",
            "/loki/api/v1/label/app/values",
            "query=%7Bapp%3D%22%FF%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.series",
            "/loki/api/v1/series",
            "match%5B%5D=%7Bapp%3D%22api%22%7D&match%5B%5D=%7Bapp%3D%22%FF%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.index_stats",
            "/loki/api/v1/index/stats",
            "query=%7Bapp%3D%22%FF%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.index_volume",
            "/loki/api/v1/index/volume",
            "query=%7Bapp%3D%22%FF%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.detected_labels",
            "/loki/api/v1/detected_labels",
            "query=%7Bapp%3D%22%FF%22%7D&start=1787389200&end=1787392800",
        ),
        (
            "utf8.format_query",
            "/loki/api/v1/format_query",
            "query=%7Bapp%3D%22%FF%22%7D",
        ),
    ]
}

fn golden_path() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/errors/loki.json")
}

/// Asks every case of `base`.
async fn ask_all(base: &str) -> BTreeMap<String, Recorded> {
    let mut out = BTreeMap::new();
    for (id, path, params) in cases() {
        let u = url(base, path, &params);
        let (status, _, body) = client::try_get(&u, &[])
            .await
            .map(client::Answer::parts)
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        out.insert(
            id.to_owned(),
            Recorded {
                request: url("", path, &params),
                status,
                body,
            },
        );
    }
    for (id, path, raw) in raw_cases() {
        let (status, _, body) = client::try_get(&format!("{base}{path}?{raw}"), &[])
            .await
            .map(client::Answer::parts)
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        out.insert(
            id.to_owned(),
            Recorded {
                request: format!("{path}?{raw}"),
                status,
                body,
            },
        );
    }
    out
}

/// A closed loopback port, as VictoriaLogs' address.
fn dead_backend() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    format!("http://127.0.0.1:{port}")
}

fn compare(loki: &BTreeMap<String, Recorded>, lokivl: &BTreeMap<String, Recorded>) -> Vec<String> {
    let mut failures = Vec::new();
    for (id, l) in loki {
        let Some(v) = lokivl.get(id) else {
            failures.push(format!("{id}: no lokivl answer"));
            continue;
        };
        if l.request != v.request {
            failures.push(format!("{id}: recorded for another request; re-record"));
        } else if l.status != v.status || l.body != v.body {
            failures.push(format!(
                "{id}: loki {} {:?}\n      lokivl {} {:?}",
                l.status, l.body, v.status, v.body
            ));
        }
    }
    println!(
        "errors parity: {}/{} equal",
        loki.len() - failures.len(),
        loki.len()
    );
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_answered_like_a_real_loki() {
    if support::topup::live_skips() {
        return;
    }
    let Some(loki_bin) = loki::find_loki_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no Loki binary (set LOKIVL_LOKI_BIN or put loki on PATH)\n"),
        );
        return;
    };
    // Loki's default query length limit (the shared config turns it off).
    let loki = Loki::start_with(&loki_bin, |c| {
        c.replace("max_query_length: 0", "max_query_length: 721h")
    })
    .await;
    let loki_answers = ask_all(&loki.url).await;
    drop(loki);
    if support::topup::records_whole() {
        std::fs::create_dir_all(golden_path().parent().expect("a parent")).expect("create dir");
        let text = serde_json::to_string_pretty(&loki_answers).expect("serialize");
        std::fs::write(golden_path(), text + "\n").expect("write golden");
    }
    let lokivl = support::start_lokivl(&dead_backend()).await;
    let failures = compare(&loki_answers, &ask_all(&lokivl).await);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_answered_like_the_recorded_loki() {
    let text = std::fs::read_to_string(golden_path()).expect(
        "tests/golden/errors/loki.json is missing; record it with \
         LOKIVL_LOKI_BIN=... LOKIVL_RECORD_GOLDEN=1 cargo test -p proxy --test differential errors::",
    );
    let loki: BTreeMap<String, Recorded> = serde_json::from_str(&text).expect("valid golden");
    let lokivl = support::start_lokivl(&dead_backend()).await;
    let failures = compare(&loki, &ask_all(&lokivl).await);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

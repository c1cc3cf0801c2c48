//! The value checks run by the end-to-end suite, against real VictoriaLogs or
//! against its golden responses.
//!
//! Every expectation is computed from the dataset by a small model of Loki's
//! semantics (selector, line filters, parsers, label filters, ordering,
//! limit), so these checks assert the lines the data holds.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::client::{self, url};
use super::dataset::{self, BASE_NS, Entry};

type Labels = BTreeMap<String, String>;

/// What a log query selects, as a model.
struct Model<'a> {
    select: &'a (dyn Fn(&Entry) -> bool + Sync),
    /// Parsed labels per entry (empty without a parser).
    parse: &'a (dyn Fn(&Entry) -> Labels + Sync),
    /// Label filter over all labels (stream, metadata, parsed).
    keep: &'a (dyn Fn(&Labels) -> bool + Sync),
}

fn no_parse(_: &Entry) -> Labels {
    Labels::new()
}

fn keep_all(_: &Labels) -> bool {
    true
}

/// Loki's `| json` on a flat object: every key, numbers as written.
fn parse_json(e: &Entry) -> Labels {
    let v: Value = serde_json::from_str(&e.line).expect("dataset JSON line");
    v.as_object()
        .expect("flat object")
        .iter()
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), s)
        })
        .collect()
}

/// Loki's `| logfmt` on the dataset's lines (`k=v` and `k="quoted"`).
fn parse_logfmt(e: &Entry) -> Labels {
    let mut out = Labels::new();
    let mut rest = e.line.as_str();
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim().to_string();
        rest = &rest[eq + 1..];
        let value;
        if let Some(r) = rest.strip_prefix('"') {
            let end = r.find('"').expect("closing quote");
            value = r[..end].to_string();
            rest = &r[end + 1..];
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            value = rest[..end].to_string();
            rest = &rest[end..];
        }
        out.insert(key, value);
        rest = rest.trim_start();
    }
    out
}

/// Loki's label-set string, the sort key of streams.
fn label_string(l: &Labels) -> String {
    let parts: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// The `data.result` Loki gives for `model` over `[start, end)`.
fn expected_result(
    entries: &[Entry],
    model: &Model<'_>,
    start: i64,
    end: i64,
    limit: usize,
    backward: bool,
    categorize: bool,
) -> Value {
    let mut picked: Vec<(&Entry, Labels)> = entries
        .iter()
        .filter(|e| e.time_ns >= start && e.time_ns < end && (model.select)(e))
        .map(|e| (e, (model.parse)(e)))
        .filter(|(e, parsed)| {
            let mut all = e.stream.clone();
            all.extend(e.metadata.clone());
            all.extend(parsed.clone());
            (model.keep)(&all)
        })
        .collect();
    picked.sort_by_key(|(e, _)| e.time_ns);
    if backward {
        picked.reverse();
    }
    picked.truncate(limit);

    let mut streams: BTreeMap<String, (Labels, Vec<Value>)> = BTreeMap::new();
    for (e, parsed) in picked {
        let (labels, value) = if categorize {
            let mut third = serde_json::Map::new();
            if !e.metadata.is_empty() {
                third.insert("structuredMetadata".into(), json!(e.metadata));
            }
            if !parsed.is_empty() {
                third.insert("parsed".into(), json!(parsed));
            }
            (
                e.stream.clone(),
                json!([e.time_ns.to_string(), e.line, Value::Object(third)]),
            )
        } else {
            let mut all = e.stream.clone();
            all.extend(e.metadata.clone());
            all.extend(parsed);
            (all, json!([e.time_ns.to_string(), e.line]))
        };
        streams
            .entry(label_string(&labels))
            .or_insert_with(|| (labels, Vec::new()))
            .1
            .push(value);
    }
    Value::Array(
        streams
            .into_values()
            .map(|(labels, values)| json!({"stream": labels, "values": values}))
            .collect(),
    )
}

/// One log query check: lokivl's `data.result` must equal the model's.
#[allow(clippy::too_many_arguments)]
async fn check_log_query(
    base: &str,
    entries: &[Entry],
    query: &str,
    model: &Model<'_>,
    (start, end): (i64, i64),
    limit: usize,
    backward: bool,
    categorize: bool,
) {
    let (s, e, l) = (start.to_string(), end.to_string(), limit.to_string());
    let direction = if backward { "backward" } else { "forward" };
    let u = url(
        base,
        "/loki/api/v1/query_range",
        &[
            ("query", query),
            ("start", &s),
            ("end", &e),
            ("limit", &l),
            ("direction", direction),
            ("step", "15000ms"),
        ],
    );
    let headers: &[(&str, &str)] = if categorize {
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")]
    } else {
        &[]
    };
    let (status, ctype, body) = client::get(&u, headers).await.expect("lokivl answers");
    assert_eq!(status, 200, "{query}: {body}");
    assert!(ctype.starts_with("application/json"), "{query}: {ctype}");
    let got: Value = serde_json::from_str(&body).expect("valid JSON");
    assert_eq!(got["status"], "success", "{query}");
    assert_eq!(got["data"]["resultType"], "streams", "{query}");
    if categorize {
        assert_eq!(
            got["data"]["encodingFlags"],
            json!(["categorize-labels"]),
            "{query}"
        );
    } else {
        assert!(got["data"].get("encodingFlags").is_none(), "{query}");
    }
    let want = expected_result(entries, model, start, end, limit, backward, categorize);
    assert!(
        want.as_array().is_some_and(|a| !a.is_empty()) || query.contains("nomatch"),
        "{query}: the model selects nothing, so the check would prove little"
    );
    assert_eq!(
        got["data"]["result"], want,
        "{query} (categorize={categorize}, {direction})"
    );
}

async fn get_json(base: &str, path: &str, params: &[(&str, &str)]) -> Value {
    let (status, _, body) = client::get(&url(base, path, params), &[])
        .await
        .expect("lokivl answers");
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).expect("valid JSON")
}

fn sorted_strings(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect();
    out.sort();
    out
}

/// Runs every check against lokivl at `base`.
pub async fn run_all(base: &str) {
    let entries = dataset::entries();
    let first = BASE_NS - 1_000_000_000;
    let last = dataset::last_ns(&entries) + 1_000_000_000;
    let (s, e) = (first.to_string(), last.to_string());
    let range = [("start", s.as_str()), ("end", e.as_str())];

    // Label names: every stream label of the data, nothing else.
    let got = get_json(base, "/loki/api/v1/labels", &range).await;
    assert_eq!(got["status"], "success");
    assert_eq!(sorted_strings(&got["data"]), ["app", "env", "team"]);

    // Label values, then narrowed by a selector.
    let got = get_json(base, "/loki/api/v1/label/app/values", &range).await;
    assert_eq!(
        sorted_strings(&got["data"]),
        ["api", "api-gateway", "worker"]
    );
    let mut with_query = range.to_vec();
    with_query.push(("query", r#"{env="prod"}"#));
    let got = get_json(base, "/loki/api/v1/label/app/values", &with_query).await;
    assert_eq!(sorted_strings(&got["data"]), ["api", "api-gateway"]);

    // Series: exact label sets; `=~` is anchored.
    let mut series = range.to_vec();
    series.push(("match[]", r#"{app=~"api"}"#));
    series.push(("match[]", r#"{team="data"}"#));
    let got = get_json(base, "/loki/api/v1/series", &series).await;
    let mut sets: Vec<Value> = got["data"].as_array().expect("series list").clone();
    sets.sort_by_key(|v| v.to_string());
    assert_eq!(
        sets,
        vec![
            json!({"app": "api", "env": "prod"}),
            json!({"app": "worker", "env": "dev", "team": "data"}),
        ]
    );

    let stream_is =
        |k: &'static str, v: &'static str| move |e: &Entry| e.stream.get(k).is_some_and(|x| x == v);
    let api = stream_is("app", "api");
    let prod = stream_is("env", "prod");
    let worker = stream_is("app", "worker");
    let window = (first, last);

    // Plain selector, both encodings, both directions, limit.
    for categorize in [false, true] {
        for backward in [true, false] {
            let m = Model {
                select: &api,
                parse: &no_parse,
                keep: &keep_all,
            };
            check_log_query(
                base,
                &entries,
                r#"{app="api"}"#,
                &m,
                window,
                20,
                backward,
                categorize,
            )
            .await;
        }
    }

    // `=~` matches the whole value: `api` does not select `api-gateway`.
    let m = Model {
        select: &api,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{app=~"api"}"#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    let api_star = |e: &Entry| e.stream["app"].starts_with("api");
    let m = Model {
        select: &api_star,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{app=~"api.*"}"#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    let not_api = |e: &Entry| e.stream["app"] != "api";
    let m = Model {
        select: &not_api,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{env=~".+", app!="api"}"#,
        &m,
        window,
        1000,
        true,
        false,
    )
    .await;

    // `|=` is a literal substring: brackets are not a regex class.
    let bracket = |e: &Entry| prod(e) && e.line.contains("[ERROR]");
    let m = Model {
        select: &bracket,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{env="prod"} |= "[ERROR]""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    let no_error = |e: &Entry| prod(e) && !e.line.contains("error");
    let m = Model {
        select: &no_error,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{env="prod"} != "error""#,
        &m,
        window,
        1000,
        false,
        true,
    )
    .await;
    let either =
        |e: &Entry| prod(e) && (e.line.contains("(retry)") || e.line.contains("items/7\""));
    let m = Model {
        select: &either,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{env="prod"} |= "(retry)" or "items/7\"""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;

    // Regex line filters are unanchored RE2.
    let five =
        |e: &Entry| worker(e) && (e.line.contains("status=500") || e.line.contains("status=503"));
    let m = Model {
        select: &five,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{app="worker"} |~ "status=5\\d\\d""#,
        &m,
        window,
        1000,
        true,
        false,
    )
    .await;
    let not_five =
        |e: &Entry| worker(e) && !(e.line.contains("status=500") || e.line.contains("status=503"));
    let m = Model {
        select: &not_five,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{app="worker"} !~ "status=5\\d\\d""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;

    // Parsers and label filters: values and label categories.
    let level_error = |l: &Labels| l.get("level").is_some_and(|v| v == "error");
    let m = Model {
        select: &api,
        parse: &parse_json,
        keep: &level_error,
    };
    check_log_query(
        base,
        &entries,
        r#"{app="api"} | json | level="error""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    check_log_query(
        base,
        &entries,
        r#"{app="api"} | json | level="error""#,
        &m,
        window,
        1000,
        true,
        false,
    )
    .await;
    let status_5xx = |l: &Labels| {
        l.get("status")
            .and_then(|v| v.parse::<f64>().ok())
            .is_some_and(|v| v >= 500.0)
    };
    let m = Model {
        select: &worker,
        parse: &parse_logfmt,
        keep: &status_5xx,
    };
    check_log_query(
        base,
        &entries,
        r#"{app="worker"} | logfmt | status >= 500"#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    check_log_query(
        base,
        &entries,
        r#"{app="worker"} | logfmt | status >= 500"#,
        &m,
        window,
        1000,
        false,
        false,
    )
    .await;
    let job_re = |l: &Labels| {
        l.get("job")
            .is_some_and(|v| v == "export-1" || v == "export-2")
    };
    let m = Model {
        select: &worker,
        parse: &parse_logfmt,
        keep: &job_re,
    };
    check_log_query(
        base,
        &entries,
        r#"{app="worker"} | logfmt | job=~"export-[12]""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;

    // The limit caps entries over all streams, newest first.
    let any = |e: &Entry| !e.stream.is_empty();
    let m = Model {
        select: &any,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{env=~"prod|dev"}"#,
        &m,
        window,
        7,
        true,
        false,
    )
    .await;
    check_log_query(
        base,
        &entries,
        r#"{env=~"prod|dev"}"#,
        &m,
        window,
        7,
        false,
        true,
    )
    .await;

    // `start` is inclusive and `end` exclusive, to the nanosecond.
    let mut api_times: Vec<i64> = entries
        .iter()
        .filter(|e| api(e))
        .map(|e| e.time_ns)
        .collect();
    api_times.sort();
    let m = Model {
        select: &api,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        &entries,
        r#"{app="api"}"#,
        &m,
        (api_times[3], api_times[9]),
        1000,
        true,
        true,
    )
    .await;

    check_time_formats(base, &entries).await;
    check_instant_and_errors(base).await;
    check_operational(base).await;
}

/// Loki's time formats: RFC3339, seconds, float seconds, nanoseconds.
async fn check_time_formats(base: &str, entries: &[Entry]) {
    let api_count = |start: i64, end: i64| {
        entries
            .iter()
            .filter(|e| e.stream["app"] == "api" && e.time_ns >= start && e.time_ns < end)
            .count()
    };
    let start_s = BASE_NS / 1_000_000_000 + 60; // 10 digits: seconds
    let end_s = start_s + 120;
    let cases = [
        (start_s.to_string(), end_s.to_string()),
        (format!("{start_s}.0"), format!("{end_s}.000")),
        (
            "2025-01-15T10:01:00Z".to_string(),
            "2025-01-15T10:03:00.000Z".to_string(),
        ),
        (
            "2025-01-15T11:01:00+01:00".to_string(),
            "2025-01-15T11:03:00+01:00".to_string(),
        ),
        (
            (start_s * 1_000_000_000).to_string(),
            (end_s * 1_000_000_000).to_string(),
        ),
    ];
    let want = api_count(start_s * 1_000_000_000, end_s * 1_000_000_000);
    assert!(want > 0);
    for (start, end) in cases {
        let u = url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", r#"{app="api"}"#),
                ("start", &start),
                ("end", &end),
                ("limit", "1000"),
            ],
        );
        let (status, _, body) = client::get(&u, &[]).await.expect("lokivl answers");
        assert_eq!(status, 200, "{start}..{end}: {body}");
        let got: Value = serde_json::from_str(&body).expect("JSON");
        let n: usize = got["data"]["result"]
            .as_array()
            .expect("result")
            .iter()
            .map(|s| s["values"].as_array().expect("values").len())
            .sum();
        assert_eq!(n, want, "entries for start={start} end={end}");
    }
}

/// Grafana's health check, Loki's 400s for bad queries.
async fn check_instant_and_errors(base: &str) {
    let u = url(
        base,
        "/loki/api/v1/query",
        &[
            ("query", "vector(1)+vector(1)"),
            ("time", "4000000000"),
            ("direction", "backward"),
        ],
    );
    let (status, _, body) = client::get(&u, &[]).await.expect("lokivl answers");
    assert_eq!(status, 200, "{body}");
    let got: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(got["data"]["resultType"], "vector");
    assert_eq!(
        got["data"]["result"],
        json!([{"metric": {}, "value": [4000000000u64, "2"]}])
    );

    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case<'_>; 4] = [
        (
            "/loki/api/v1/query",
            &[("query", r#"{app="api"}"#)],
            "log queries are not supported as an instant query type, please change your query to a range query type",
        ),
        (
            "/loki/api/v1/query_range",
            &[("query", r#"{app="api""#)],
            "parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,",
        ),
        (
            "/loki/api/v1/query_range",
            &[("query", r#"{app=~".*"}"#)],
            r#"parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~".*" does not meet this requirement, but app=~".+" will"#,
        ),
        (
            "/loki/api/v1/query_range",
            &[("query", r#"{app="api"}"#), ("limit", "10000")],
            "max entries limit per query exceeded, limit > max_entries_limit_per_query (10000 > 5000)",
        ),
    ];
    for (path, params, text) in cases {
        let (status, ctype, body) = client::get(&url(base, path, params), &[])
            .await
            .expect("lokivl answers");
        assert_eq!(status, 400, "{params:?}");
        assert!(ctype.starts_with("text/plain"), "{params:?}: {ctype}");
        assert_eq!(body.trim_end(), text, "{params:?}");
    }
}

/// buildinfo, readiness, metrics, unknown routes and push.
async fn check_operational(base: &str) {
    let got = get_json(base, "/loki/api/v1/status/buildinfo", &[]).await;
    assert!(
        got["version"].as_str().is_some_and(|v| v.starts_with("3.")),
        "{got}"
    );

    let (status, _, body) = client::get(&format!("{base}/ready"), &[])
        .await
        .expect("ready");
    assert_eq!(status, 200, "{body}");

    let (status, _, body) = client::get(&format!("{base}/metrics"), &[])
        .await
        .expect("metrics");
    assert_eq!(status, 200);
    assert!(
        body.contains("query_range"),
        "metrics name the route: {body}"
    );

    let (status, _, _) = client::get(&format!("{base}/loki/api/v1/nope"), &[])
        .await
        .expect("404");
    assert_eq!(status, 404);
    let (status, _, _) = client::post(
        &format!("{base}/loki/api/v1/push"),
        "application/json",
        b"{}".to_vec(),
    )
    .await
    .expect("push");
    assert_eq!(status, 405);
}

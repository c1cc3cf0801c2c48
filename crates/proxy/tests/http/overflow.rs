//! Request values at the edges of `i64` nanoseconds (start, end, time, step,
//! since, range and offset) never overflow: every endpoint answers a 2xx or
//! a 4xx, never a 500 or a panic. Tests run with overflow checks (debug), and
//! release builds keep them on for the proxy crate, so a wrap anywhere on the
//! request path fails this suite.

use crate::support::client::qs;
use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

const TIMES: &[&str] = &[
    "-9223372036854775808",
    "-9223372036854775807",
    "-9223372036",
    "-1",
    "0",
    "1787389200",
    "9223372036",
    "9223372036.854",
    "9223372036854775806",
    "9223372036854775807",
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00Z",
];

const STEPS: &[&str] = &[
    "",
    "0.001",
    "1",
    "60",
    "9223372036",
    "9223372036.854775807",
    "292y",
];

const QUERIES: &[&str] = &[
    r#"{app="api"}"#,
    r#"count_over_time({app="api"}[1m])"#,
    r#"sum by (app) (rate({app="api"}[5m] offset 1h))"#,
    r#"count_over_time({app="api"}[292y])"#,
    r#"count_over_time({app="api"}[1m] offset 292y)"#,
    r#"count_over_time({app="api"}[1m] offset -292y)"#,
    r#"count_over_time({app="api"}[292y] offset 292y)"#,
    r#"absent_over_time({app="api"}[292y] offset -292y)"#,
    r#"quantile_over_time(0.5, {app="api"} | unwrap x [292y] offset -292y)"#,
    r#"sum(count_over_time({app="api"} | json [1m] offset -292y))"#,
    r#"vector(1) + count_over_time({app="api"}[1s] offset -292y)"#,
];

/// The fake VictoriaLogs: log queries (stats ones included) get one entry
/// at the asked `start` and one at `end`, so bucket and step arithmetic runs
/// on times at the edges too; the other endpoints answer empty.
async fn echo(uri: axum::http::Uri, body: String) -> String {
    let form: Vec<(String, String)> = form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let arg = |k: &str| {
        form.iter()
            .find(|(n, _)| n == k)
            .and_then(|(_, v)| v.parse::<i64>().ok())
    };
    match uri.path() {
        "/select/logsql/query" => [arg("start"), arg("end")]
            .into_iter()
            .flatten()
            .filter_map(|t| {
                time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(t))
                    .ok()?
                    .format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .map(|t| {
                format!(
                    "{{\"_time\":\"{t}\",\"_stream_id\":\"s\",\"_stream\":\"{{app=\\\"api\\\"}}\",\"_msg\":\"x=1\",\"app\":\"api\"}}\n"
                )
            })
            .collect(),
        "/select/logsql/hits" => r#"{"hits":[]}"#.to_owned(),
        "/select/logsql/stats_query" => {
            r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#.to_owned()
        }
        "/select/logsql/stats_query_range" => {
            r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#.to_owned()
        }
        _ => r#"{"values":[]}"#.to_owned(),
    }
}

async fn router(max_query_length_ns: i64) -> axum::Router {
    let app = axum::Router::new().fallback(echo);
    let addr = crate::support::fake_vl::FakeVl::serving(app).await.addr;
    let mut s = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    s.query_limits.max_query_length_ns = max_query_length_ns;
    proxy::app::router(s).unwrap()
}

/// Sends one request; `Err` describes a panic while answering it (in the
/// handler, or in a window or cache task, which answer 500 naming it).
async fn ask(app: &axum::Router, path: &str, params: &[(&str, &str)]) -> Result<u16, String> {
    let uri = format!("{path}?{}", qs(params));
    let req = Request::get(&uri).body(Body::empty()).unwrap();
    let app = app.clone();
    let resp = tokio::spawn(async move { app.oneshot(req).await })
        .await
        .map_err(|e| format!("{uri}: panicked: {e}"))?
        .unwrap();
    let status = resp.status();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    if status == StatusCode::INTERNAL_SERVER_ERROR && text.contains("panicked") {
        return Err(format!("{uri}: 500 {text}"));
    }
    Ok(status.as_u16())
}

/// Every endpoint with `start`/`end` (and `step` where it has one) at the edges;
/// log `query_range` only with `log_ranges` (unbounded ranges make windows by the million).
async fn sweep(app: &axum::Router, log_ranges: bool) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut asked = 0;
    let mut record = |r: Result<u16, String>| {
        asked += 1;
        if let Err(e) = r {
            failures.push(e);
        }
    };
    for start in TIMES {
        for end in TIMES {
            for q in QUERIES {
                if !log_ranges && !q.contains('(') {
                    continue;
                }
                for step in STEPS {
                    let mut p = vec![("query", *q), ("start", *start), ("end", *end)];
                    if !step.is_empty() {
                        p.push(("step", step));
                    }
                    record(ask(app, "/loki/api/v1/query_range", &p).await);
                }
            }
            let b = [("start", *start), ("end", *end)];
            let sel = [
                ("query", r#"{app="api"}"#),
                ("start", *start),
                ("end", *end),
            ];
            record(ask(app, "/loki/api/v1/labels", &b).await);
            record(ask(app, "/loki/api/v1/label/app/values", &b).await);
            record(
                ask(
                    app,
                    "/loki/api/v1/series",
                    &[
                        ("match[]", r#"{app="api"}"#),
                        ("start", start),
                        ("end", end),
                    ],
                )
                .await,
            );
            record(ask(app, "/loki/api/v1/index/stats", &sel).await);
            record(ask(app, "/loki/api/v1/index/volume", &sel).await);
            for step in STEPS {
                let mut p = sel.to_vec();
                if !step.is_empty() {
                    p.push(("step", step));
                }
                record(ask(app, "/loki/api/v1/index/volume_range", &p).await);
                record(ask(app, "/loki/api/v1/patterns", &p).await);
            }
            record(ask(app, "/loki/api/v1/detected_labels", &sel).await);
            record(ask(app, "/loki/api/v1/detected_fields", &sel).await);
            record(ask(app, "/loki/api/v1/detected_field/app/values", &sel).await);
        }
        for q in QUERIES {
            record(
                ask(
                    app,
                    "/loki/api/v1/query",
                    &[("query", *q), ("time", *start)],
                )
                .await,
            );
        }
        for since in ["1h", "292y", "9223372036854ms"] {
            let p = [("query", QUERIES[1]), ("end", *start), ("since", since)];
            record(ask(app, "/loki/api/v1/query_range", &p).await);
            record(
                ask(
                    app,
                    "/loki/api/v1/labels",
                    &[("end", *start), ("since", since)],
                )
                .await,
            );
        }
    }
    (asked, failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extreme_times_steps_ranges_and_offsets_never_overflow() {
    // Loki's default max_query_length (721 h), then none at all.
    let (asked, mut failures) = sweep(&router(721 * 3_600_000_000_000).await, true).await;
    let (more, f) = sweep(&router(0).await, false).await;
    failures.extend(f);
    assert!(asked + more > 10_000, "{asked} + {more}");
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        asked + more,
        failures.join("\n")
    );
}

#[tokio::test]
async fn metric_queries_past_int64_get_400_and_the_rest_answer() {
    let app = router(721 * 3_600_000_000_000).await;
    let text = "the query's time range, step, range and offset reach past the int64 nanoseconds lokivl computes with (years 1678 to 2262); narrow them";
    let answer = |uri: String| {
        let app = app.clone();
        async move {
            let resp = app
                .oneshot(Request::get(&uri).body(Body::empty()).unwrap())
                .await
                .unwrap();
            let status = resp.status().as_u16();
            let body = resp.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8_lossy(&body).into_owned())
        }
    };
    let range = |q: &str, start: &str, end: &str, step: &str| {
        format!(
            "/loki/api/v1/query_range?{}",
            qs(&[("query", q), ("start", start), ("end", end), ("step", step)])
        )
    };
    let count = r#"count_over_time({app="api"}[1m])"#;
    // Aligning `end` up to the step would pass i64::MAX.
    let (status, body) = answer(range(
        count,
        "9223372036854775000",
        "9223372036854775807",
        "60",
    ))
    .await;
    assert_eq!((status, body.as_str()), (400, text));
    // Aligning `start` down would pass i64::MIN.
    let (status, body) = answer(range(
        count,
        "-9223372036854775808",
        "-9223372036854775000",
        "60",
    ))
    .await;
    assert_eq!((status, body.as_str()), (400, text));
    // A window reaching before i64::MIN through range and offset.
    let far = r#"count_over_time({app="api"}[292y] offset 292y)"#;
    let instant =
        |q: &str, t: &str| format!("/loki/api/v1/query?{}", qs(&[("query", q), ("time", t)]));
    let (status, body) = answer(instant(far, "1787392800")).await;
    assert_eq!((status, body.as_str()), (400, text));
    // Within int64 the same shapes answer, with the entries the fake returns.
    let (status, body) = answer(instant(
        r#"count_over_time({app="api"}[100y] offset 100y)"#,
        "1787392800",
    ))
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = answer(range(count, "1787389200", "1787392800", "60")).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["data"]["resultType"], "matrix");
    // Log queries at the very edges answer too (no alignment, no offsets).
    let (status, body) = answer(format!(
        "/loki/api/v1/query_range?{}",
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", "9223372036854775000"),
            ("end", "9223372036854775807")
        ])
    ))
    .await;
    assert_eq!(status, 200, "{body}");
}

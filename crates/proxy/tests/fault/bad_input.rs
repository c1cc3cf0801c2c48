//! Hundreds of malformed requests, generated systematically: each must get a
//! 4xx whose text is Loki's wording for that fault, never a 5xx or a panic.
//!
//! Requests go straight into the router (no sockets) except the few the
//! `http` crate cannot even build (raw invalid UTF-8, URLs over 64 KiB),
//! which go over TCP. VictoriaLogs is a closed port: a case that wrongly
//! passes validation shows up as a 502/503 and fails the suite.

use axum::body::Body;
use http::Request;
use http_body_util::BodyExt;
use tower::ServiceExt;

const START: &str = "1787389200";
const END: &str = "1787392800";
const SEL: &str = r#"{app="api"}"#;
const METRIC: &str = r#"count_over_time({app="api"}[5m])"#;

/// One malformed request and the fragment Loki's answer must contain.
struct Case {
    path: &'static str,
    params: Vec<(String, String)>,
    expect: String,
}

fn case(path: &'static str, params: &[(&str, &str)], expect: &str) -> Case {
    Case {
        path,
        params: params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        expect: expect.to_owned(),
    }
}

const BAD_TIMES: &[&str] = &[
    "abc",
    "1e",
    "2026-13-01T00:00:00Z",
    "2026-08-22",
    "2026-08-22 10:00:00",
    "--1",
    "1.2.3",
    "tomorrow",
    "0x10",
    "12:00",
    "1_000",
    "99999999999999999999999",
    "-99999999999999999999999",
    "\u{fffd}",
    "1787389200s",
    " ",
];

const BAD_LIMITS: &[(&str, &str)] = &[
    ("-1", "limit must be a positive value"),
    ("0", "limit must be a positive value"),
    ("-100000", "limit must be a positive value"),
    ("abc", "invalid syntax"),
    ("1.5", "invalid syntax"),
    ("1e3", "invalid syntax"),
    ("99999999999999999999", "strconv.Atoi"),
    ("5001", "max entries limit per query exceeded"),
    ("10000", "max entries limit per query exceeded"),
    ("4294967296", "max entries limit per query exceeded"),
    (" 10", "invalid syntax"),
];

const BAD_DIRECTIONS: &[&str] = &[
    "sideways", "up", "forwards", "back", "FORWARDx", "0", "1", "\u{fffd}", "asc", "desc",
];

const BAD_STEPS: &[(&str, &str)] = &[
    (
        "0",
        "zero or negative query resolution step widths are not accepted",
    ),
    (
        "-1",
        "zero or negative query resolution step widths are not accepted",
    ),
    ("-5m", "cannot parse"),
    (
        "0s",
        "zero or negative query resolution step widths are not accepted",
    ),
    ("abc", "cannot parse"),
    ("1.5s", "cannot parse"),
    ("1x", "cannot parse"),
    ("5m1h", "cannot parse"),
    ("0.0001", "exceeded maximum resolution of 11,000 points"),
    ("1ms", "exceeded maximum resolution of 11,000 points"),
    ("100ms", "exceeded maximum resolution of 11,000 points"),
    (
        "nan",
        "zero or negative query resolution step widths are not accepted",
    ),
    ("1e400", "cannot parse"),
];

/// Malformed LogQL: every answer starts with Loki's parse-error prefix or a query-level text.
fn bad_queries() -> Vec<String> {
    let mut q: Vec<String> = [
        "",
        " ",
        "{",
        "}",
        "{app=\"api\"",
        "{app=\"api}",
        "{app=api}",
        "{app=\"api\",}",
        "{=\"api\"}",
        "{app==\"api\"}",
        "{}",
        "{app=~\".*\"}",
        "{app=\"\"}",
        "{app!=\"api\"}",
        "{app=~\"(\"}",
        "{app=~\"[\"}",
        "{app=~\"a{2,1}\"}",
        "{app=\"api\"} |=",
        "{app=\"api\"} |= api",
        "{app=\"api\"} | json |",
        "{app=\"api\"} | foo",
        "{app=\"api\"} | level=~\"(\"",
        "{app=\"api\"} | unwrap",
        "{app=\"api\"} | logfmt | duration > 5x",
        "rate({app=\"api\"}[5x])",
        "rate({app=\"api\"}[])",
        "rate({app=\"api\"})",
        "rate({app=\"api\"}[5m]",
        "sum(",
        "sum by (",
        "sum by () rate({app=\"api\"}[5m])",
        "topk(rate({app=\"api\"}[5m]))",
        "sum_over_time({app=\"api\"}[5m])",
        "count_over_time({app=\"api\"} | unwrap x [5m])",
        "quantile_over_time({app=\"api\"} | unwrap x [5m])",
        "1 +",
        "+",
        "(((",
        ")))",
        "\"just a string\"",
        "label_replace(",
        "{app=\"api\"} | line_format",
        "\u{0}",
        "{app=\"\u{fffd}\"",
        "{app=\"api\"} |= \"x\" or",
        "sum(rate({app=\"api\"}[5m])) by",
        "{app=\"api\"} | json foo=",
        "vector(",
        "absent_over_time({app=\"api\"})",
        "rate({app=\"api\"}[5m]) > bool",
        "{app=\"api\"} | decolorize(",
        "{app=\"api\"} offset 5m",
        "rate({app=\"api\"}[5m] offset)",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // Deep nesting beyond the parser's cap, several shapes.
    q.push(format!("{}1{}", "(".repeat(300), ")".repeat(300)));
    q.push(format!(
        "{}rate({{app=\"api\"}}[5m]){}",
        "sum(".repeat(300),
        ")".repeat(300)
    ));
    q.push(format!("{}{SEL}", "(".repeat(5000)));
    q.push("[".repeat(10_000));
    q.push("{".repeat(10_000));
    // Too many operators.
    q.push(vec!["1"; 2000].join(" + "));
    q
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let range = [("query", SEL), ("start", START), ("end", END)];
    // Bad times on every endpoint that takes them.
    for path in [
        "/loki/api/v1/query_range",
        "/loki/api/v1/labels",
        "/loki/api/v1/label/app/values",
        "/loki/api/v1/series",
    ] {
        for t in BAD_TIMES {
            for p in ["start", "end"] {
                let mut params = vec![("query", SEL), ("match[]", SEL)];
                params.push((p, t));
                out.push(case(
                    path,
                    &params,
                    &format!("could not parse '{p}' parameter"),
                ));
            }
        }
        for s in ["1x", "abc", "-", "5m1h", "1.5h", "\u{fffd}"] {
            out.push(case(
                path,
                &[("query", SEL), ("match[]", SEL), ("since", s)],
                "could not parse 'since' parameter",
            ));
        }
    }
    for t in BAD_TIMES {
        out.push(case(
            "/loki/api/v1/query",
            &[("query", METRIC), ("time", t)],
            "strconv.ParseInt",
        ));
    }
    // start after end.
    for (s, e) in [
        (END, START),
        ("1787392801", "1787392800"),
        ("2026-08-22T11:00:00Z", "2026-08-22T10:00:00Z"),
        ("1787392800000000001", "1787392800000000000"),
        ("1787392800.5", "1787392800.4"),
        ("9999999999", "1"),
        ("1", "-1"),
        ("0", "-9999999999"),
    ] {
        for q in [SEL, METRIC] {
            out.push(case(
                "/loki/api/v1/query_range",
                &[("query", q), ("start", s), ("end", e)],
                "end timestamp must not be before or equal to start time",
            ));
        }
    }
    // Limits (log queries; both endpoints parse limit).
    for (l, expect) in BAD_LIMITS {
        let mut params = range.to_vec();
        params.push(("limit", l));
        out.push(case("/loki/api/v1/query_range", &params, expect));
        if !expect.starts_with("max entries") {
            out.push(case(
                "/loki/api/v1/query",
                &[("query", METRIC), ("limit", l)],
                expect,
            ));
        }
    }
    for d in BAD_DIRECTIONS {
        let mut params = range.to_vec();
        params.push(("direction", d));
        out.push(case(
            "/loki/api/v1/query_range",
            &params,
            "invalid direction '",
        ));
        out.push(case(
            "/loki/api/v1/query",
            &[("query", METRIC), ("direction", d)],
            "invalid direction '",
        ));
    }
    for (s, expect) in BAD_STEPS {
        for q in [SEL, METRIC] {
            out.push(case(
                "/loki/api/v1/query_range",
                &[("query", q), ("start", START), ("end", END), ("step", s)],
                expect,
            ));
        }
    }
    // Too many points at a valid step: a 30-day range at 1 s.
    out.push(case(
        "/loki/api/v1/query_range",
        &[
            ("query", METRIC),
            ("start", "1784800800"),
            ("end", END),
            ("step", "1"),
        ],
        "exceeded maximum resolution of 11,000 points",
    ));
    // Range longer than max_query_length.
    for start in ["1", "1700000000", "1784000000"] {
        out.push(case(
            "/loki/api/v1/query_range",
            &[
                ("query", METRIC),
                ("start", start),
                ("end", END),
                ("step", "604800"),
            ],
            "the query time range exceeds the limit",
        ));
    }
    // Malformed LogQL on both query endpoints.
    for q in bad_queries() {
        for path in ["/loki/api/v1/query_range", "/loki/api/v1/query"] {
            let mut c = case(path, &[("start", START), ("end", END)], "");
            c.params.push(("query".to_owned(), q.clone()));
            c.expect = "parse error".to_owned();
            out.push(c);
        }
    }
    // Log queries sent to the instant endpoint.
    for q in [SEL, r#"{app="api"} |= "x""#, r#"{app="api"} | json"#] {
        out.push(case(
            "/loki/api/v1/query",
            &[("query", q)],
            "log queries are not supported as an instant query type",
        ));
    }
    // Selectors endpoints given full queries or broken selectors.
    for m in [
        r#"{app="api"} |= "x""#,
        r#"rate({app="api"}[5m])"#,
        "{",
        r#"{app=~"("}"#,
        "app",
        r#"{app="api"} | json"#,
    ] {
        out.push(case("/loki/api/v1/series", &[("match[]", m)], ""));
        out.push(case("/loki/api/v1/labels", &[("query", m)], ""));
        out.push(case("/loki/api/v1/label/app/values", &[("query", m)], ""));
    }
    out
}

async fn send(app: &axum::Router, req: Request<Body>) -> (u16, String) {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn query_string(params: &[(String, String)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish()
}

#[tokio::test]
async fn every_malformed_request_is_a_4xx_in_lokis_words() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let settings = proxy::config::Settings::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let app = proxy::app::router(settings).unwrap();
    let cases = cases();
    let mut failures = Vec::new();
    let mut sent = 0;
    for c in &cases {
        let qs = query_string(&c.params);
        // GET with the query string, and POST with a form body (logcli, scripts).
        let get = Request::get(format!("{}?{qs}", c.path))
            .body(Body::empty())
            .unwrap();
        let post = Request::post(c.path)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(qs.clone()))
            .unwrap();
        for (how, req) in [("GET", get), ("POST", post)] {
            sent += 1;
            let (status, body) = send(&app, req).await;
            if !(400..500).contains(&status) || !body.contains(&c.expect) {
                let shown: String = format!("{:?}", c.params).chars().take(200).collect();
                failures.push(format!(
                    "{how} {} {shown}: {status} {:?} (wanted {:?})",
                    c.path,
                    body.chars().take(200).collect::<String>(),
                    c.expect
                ));
            }
        }
    }
    assert!(sent >= 600, "only {sent} requests generated");
    assert!(
        failures.is_empty(),
        "{} of {sent} malformed requests were not a 4xx in Loki's words:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn percent_encoded_invalid_utf8_is_a_4xx() {
    let settings = proxy::config::Settings::new("http://127.0.0.1:1").unwrap();
    let app = proxy::app::router(settings).unwrap();
    let mut n = 0;
    for param in [
        "query",
        "start",
        "end",
        "limit",
        "direction",
        "step",
        "since",
    ] {
        for bad in ["%FF", "%C3%28", "%ED%A0%80", "%F0%28%8C%28", "%80%80"] {
            // The bad value comes first: the first of repeated keys wins, as in Go.
            let uri = format!(
                "/loki/api/v1/query_range?{param}={bad}&query=%7Bapp%3D%22api%22%7D&start={START}&end={END}&limit=10&step=60"
            );
            let (status, body) = send(&app, Request::get(uri).body(Body::empty()).unwrap()).await;
            assert!(
                (400..500).contains(&status),
                "{param}={bad}: {status} {body}"
            );
            n += 1;
        }
    }
    assert_eq!(n, 35);
}

#[tokio::test]
async fn raw_invalid_bytes_and_oversized_requests_are_4xx() {
    let settings = proxy::config::Settings::new("http://127.0.0.1:1").unwrap();
    let base = crate::support::lokivl::start_proxy(settings).await;
    let targets: Vec<Vec<u8>> = vec![
        b"/loki/api/v1/query_range?query=\xff\xfe".to_vec(),
        b"/loki/api/v1/query_range?query={app=\"\xc3\x28\"}".to_vec(),
        b"/loki/api/v1/labels?start=\x80".to_vec(),
        b"/loki/api/v1/query?query=\x00".to_vec(),
        b"/loki/api/v1/series?match[]={a=\"b\"}".to_vec(),
        format!("/loki/api/v1/query_range?query={}", "a".repeat(70_000)).into_bytes(),
        format!("/loki/api/v1/labels?{}", "x=1&".repeat(20_000)).into_bytes(),
    ];
    for t in targets {
        let (status, body) = crate::support::client::raw_get(&base, &t).await;
        assert!(
            (400..500).contains(&status),
            "{:?}: {status} {body}",
            String::from_utf8_lossy(&t[..t.len().min(80)])
        );
    }
    // A form body whose query is past the parser's length cap.
    let body = format!("query={}&start={START}&end={END}", "a".repeat(200_000));
    let req = format!(
        "POST /loki/api/v1/query_range HTTP/1.1\r\nHost: x\r\nConnection: close\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, text) = crate::support::client::raw(&base, req.as_bytes()).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("input size too long"), "{text}");
}

/// Invalid regular expressions in line filters pass lokivl's parser and are
/// only refused by VictoriaLogs, which lokivl reports as a 500 (or a 502 when
/// VictoriaLogs is down). They belong in the parser's validation (reported to
/// its owner); run with `--ignored` to see whether that gap is closed.
#[tokio::test]
#[ignore = "known gap: line-filter regexes are not validated before VictoriaLogs"]
async fn invalid_line_filter_regexes_are_a_4xx() {
    let settings = proxy::config::Settings::new("http://127.0.0.1:1").unwrap();
    let app = proxy::app::router(settings).unwrap();
    for q in [
        r#"{app="api"} |~ "(""#,
        r#"{app="api"} |~ "*""#,
        r#"{app="api"} !~ "[z-a]""#,
    ] {
        let uri = format!(
            "/loki/api/v1/query_range?{}",
            query_string(&[
                ("query".into(), q.into()),
                ("start".into(), START.into()),
                ("end".into(), END.into()),
            ])
        );
        let (status, body) = send(&app, Request::get(uri).body(Body::empty()).unwrap()).await;
        assert_eq!(status, 400, "{q}: {body}");
    }
}

/// A bounded randomized sweep: random parameter soups never give a 5xx.
#[tokio::test]
async fn random_parameter_soups_never_give_a_5xx() {
    let settings = proxy::config::Settings::new("http://127.0.0.1:1").unwrap();
    let app = proxy::app::router(settings).unwrap();
    let keys = [
        "query",
        "start",
        "end",
        "time",
        "since",
        "limit",
        "direction",
        "step",
        "interval",
        "match[]",
    ];
    let atoms = [
        "",
        "0",
        "-1",
        "1.5",
        "abc",
        "1e9",
        "5m",
        "1787389200",
        "2026-08-22T10:00:00Z",
        "{",
        "}",
        "(",
        "\"",
        "|=",
        "|~",
        "[5m]",
        "rate(",
        "{app=\"api\"}",
        "forward",
        "%",
        "\u{fffd}",
        "99999999999999999999",
        "nan",
        "inf",
        "-inf",
    ];
    // xorshift64*, fixed seed: reproducible and dependency-free.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let paths = [
        "/loki/api/v1/query_range",
        "/loki/api/v1/query",
        "/loki/api/v1/labels",
        "/loki/api/v1/label/app/values",
        "/loki/api/v1/series",
    ];
    for _ in 0..1500 {
        let path = paths[(next() % paths.len() as u64) as usize];
        let n = 1 + next() % 6;
        let mut params = Vec::new();
        for _ in 0..n {
            let k = keys[(next() % keys.len() as u64) as usize];
            let mut v = String::new();
            for _ in 0..(next() % 4) {
                v.push_str(atoms[(next() % atoms.len() as u64) as usize]);
            }
            params.push((k.to_owned(), v));
        }
        let uri = format!("{path}?{}", query_string(&params));
        let (status, body) = send(&app, Request::get(&uri).body(Body::empty()).unwrap()).await;
        // Valid soups may reach the (closed) backend: 502/503 name VictoriaLogs.
        // Anything else at 5xx is a defect.
        assert!(
            status < 500 || body.contains("VictoriaLogs"),
            "{uri}: {status} {body}"
        );
    }
}

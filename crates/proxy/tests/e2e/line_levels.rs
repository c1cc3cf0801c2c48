//! `detected_level` of lines counted in VictoriaLogs: the LogsQL pipes of
//! `logsql_ast::line_level` against a real VictoriaLogs, line by line, on
//! lines mixing JSON, logfmt and plain text with level words in every
//! spelling, case and position Loki knows, checked against lokivl's
//! row-by-row derivation (`engine::discovery`, itself checked
//! against Loki 3.7); then Drilldown's `sum by (detected_level)` through
//! lokivl with a row budget far below the entries counted, and, when
//! `LOKIVL_LOKI_BIN` is set, line by line against the `detected_level`
//! Loki 3.7 stored.

use crate::support;

use std::collections::BTreeMap;

use crate::support::backend::{self, VictoriaLogs};
use crate::support::client::{self, url};
use engine::discovery::{detected_level, level_from_line};
use serde_json::{Value, json};

/// 2026-08-22T10:00:00Z.
const BASE_S: i64 = 1_787_392_800;

/// Level words and values in Loki's spellings, and words that are none.
const WORDS: &[&str] = &[
    "trace",
    "trc",
    "debug",
    "dbg",
    "info",
    "inf",
    "information",
    "warn",
    "wrn",
    "warning",
    "error",
    "err",
    "critical",
    "fatal",
    "notice",
    "errors",
];

/// Line templates (`W` is the word) and whether VictoriaLogs must classify
/// every line of the template itself (on every release), rather than leave
/// it to the proxy.
const TEMPLATES: &[(&str, bool)] = &[
    // Plain text: the earliest bounded word.
    ("W x", true),
    ("x W", true),
    ("[W] disk full", true),
    ("misc:W happened", true),
    ("W: then error", true),
    ("(W) then debug", true),
    ("xW yW", true),
    ("GET /x 200", true),
    ("\"W\"!", true),
    ("a{W}b", true),
    ("tab\tW\nnext info", true),
    ("info then W", true),
    // JSON: top-level level keys, in order, with other members.
    (r#"{"level":"W"}"#, true),
    (r#"{"msg":"x error","level":"W","n":1}"#, true),
    (r#"{ "Level" : "W" , "msg":"info" }"#, true),
    (r#"{"level":5,"lvl":"W"}"#, true),
    (r#"{"severity":"W","level":"info"}"#, true),
    (r#"{"SeverityText":"W"}"#, true),
    (r#"{"level":"W","level":"info"}"#, true),
    (r#"{"msg":"W happened"}"#, true),
    (r#"{"msg":"level W"}"#, false),
    (r#"{"level":"","msg":"W"}"#, false),
    // JSON the pipes leave to the proxy: nested or late keys, escapes, invalid.
    (r#"{"a":{"lvl":"W"}}"#, false),
    (r#"{"a":{"b":{"level":"W"}}}"#, false),
    (r#"{"msg":"[x]","level":"W"}"#, false),
    (r#"{"lev\u0065l":"W"}"#, false),
    (r#"{"level":"W\u0021"}"#, false),
    (r#"{"msg":"a,"level":"W"}"#, false),
    (r#"  {"log.level":"W"}  "#, false),
    (r#"{"log":{"level":"W"}}"#, false),
    (r#"[{"level":"W"}]"#, true),
    (
        r#"{"msg":"a \"q\" \\ \u00e9","n":-1.5e3,"ok":true,"x":null,"level":"W"}"#,
        true,
    ),
    ("{\n  \"ts\": 1,\r\n  \"level\" :\t\"W\"\n}", true),
    (r#"{"level":null,"lvl":"W","severity":"info"}"#, true),
    (r#"{"level":"W\n"}"#, false),
    ("{\"level\":\"W\u{1}\"}", false),
    (r#"{"a":[1],"level":"W"}"#, false),
    (r#"{"level":"W"} trailing }"#, true),
    ("\u{a0}{\"level\":\"W\"}\u{3000}", false),
    // logfmt.
    ("ts=1 level=W msg=x", true),
    ("level=W", true),
    ("LEVEL=W msg=\"an error\"", true),
    ("ts=2 Level=W", true),
    ("severity=W msg=x", true),
    ("lvl=W msg=x", true),
    ("a=b W", true),
    ("a=b c=d", true),
    ("x=1 level=W, y", false),
    ("msg=\"level=info\" level=W", false),
    ("lvl=W level=info", false),
    ("level=\"W\"", false),
    ("level= lvl=W", false),
    ("ts=1 msg=x severity=W lvl=debug", false),
    ("level=W level=info", false),
    ("log.level=W", false),
    ("ts=1\tlevel=W\rmsg=x", true),
    ("msg=héllo level=W", true),
    ("a=b=c level=W", false),
    ("foo level=W", false),
    ("level=W\u{1} x", false),
    ("Severity=W LvL=info", true),
    ("lvl=W severity_text=info", false),
];

/// `w` in three cases.
fn cases(w: &str) -> [String; 3] {
    let mut title = w.to_owned();
    title[..1].make_ascii_uppercase();
    [w.to_owned(), w.to_ascii_uppercase(), title]
}

struct Line {
    line: String,
    /// VictoriaLogs must classify it (not [`logsql_ast::line_level::RESIDUE`]).
    exact: bool,
}

fn lines() -> Vec<Line> {
    let mut out = Vec::new();
    for (t, exact) in TEMPLATES {
        for w in WORDS {
            for c in cases(w) {
                out.push(Line {
                    line: t.replace('W', &c),
                    exact: *exact,
                });
            }
        }
    }
    out.sort_by(|a, b| a.line.cmp(&b.line));
    out.dedup_by(|a, b| a.line == b.line);
    out
}

/// One entry of the push: stream labels, line, metadata.
struct Entry {
    stream: Vec<(&'static str, &'static str)>,
    line: String,
    metadata: Vec<(&'static str, &'static str)>,
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

impl Entry {
    /// The level lokivl derives row by row.
    fn level(&self) -> String {
        detected_level(&pairs(&self.stream), &pairs(&self.metadata), &self.line)
    }
}

/// Every line in a stream without level labels, then a few with a level
/// label, level metadata, OTel severity or a stored `detected_level`.
fn entries(lines: &[Line]) -> Vec<Entry> {
    let mut out: Vec<Entry> = lines
        .iter()
        .map(|l| Entry {
            stream: vec![("app", "lines")],
            line: l.line.clone(),
            metadata: Vec::new(),
        })
        .collect();
    let some = ["info x", r#"{"level":"error"}"#, "level=debug", "GET /"];
    for line in some {
        let e = |stream: Vec<(&'static str, &'static str)>, metadata| Entry {
            stream,
            line: line.to_owned(),
            metadata,
        };
        out.push(e(vec![("app", "labeled"), ("level", "WARN")], Vec::new()));
        out.push(e(vec![("app", "labeled"), ("lvl", "notice")], Vec::new()));
        out.push(e(vec![("app", "meta")], vec![("level", "Err")]));
        out.push(e(vec![("app", "meta")], vec![("severity_number", "10")]));
        out.push(e(vec![("app", "meta")], vec![("detected_level", "FATAL")]));
        out.push(e(vec![("app", "meta")], vec![("trace_id", "abc")]));
    }
    out
}

fn push_body(data: &[Entry]) -> String {
    let mut streams: BTreeMap<Vec<(&str, &str)>, Vec<Value>> = BTreeMap::new();
    for (i, e) in data.iter().enumerate() {
        let ns = (BASE_S * 1_000_000_000 + 1_000_000 * (i as i64 + 1)).to_string();
        let meta: serde_json::Map<String, Value> = e
            .metadata
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect();
        let value = if meta.is_empty() {
            json!([ns, e.line])
        } else {
            json!([ns, e.line, meta])
        };
        streams.entry(e.stream.clone()).or_default().push(value);
    }
    let streams: Vec<Value> = streams
        .into_iter()
        .map(|(s, values)| {
            let labels: serde_json::Map<String, Value> =
                s.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
            json!({"stream": labels, "values": values})
        })
        .collect();
    json!({ "streams": streams }).to_string()
}

fn skip(what: &str) -> bool {
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("skipped: no {what} binary\n"),
    );
    true
}

/// `line → __lokivl_ll` as VictoriaLogs computes it for the stream without levels.
async fn vl_levels(vl: &str) -> BTreeMap<String, String> {
    let q = format!(
        r#"{{app="lines"}}{} | fields _msg, "{}""#,
        engine::metric::discovered::line_level_pipes(),
        logsql_ast::line_level::LEVEL_FIELD
    );
    let (st, _, body) = client::try_post(
        &format!("{vl}/select/logsql/query"),
        "application/x-www-form-urlencoded",
        format!(
            "query={}&start=0&end={}",
            urlencode(&q),
            (BASE_S + 3600) * 1_000_000_000
        )
        .into_bytes(),
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{body}");
    body.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["_msg"].as_str().unwrap().to_owned(),
                v[logsql_ast::line_level::LEVEL_FIELD]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect()
}

fn urlencode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

async fn counts(base: &str, q: &str) -> BTreeMap<String, String> {
    counts_over(base, q, BASE_S + 60, BASE_S + 120).await
}

/// `labels → value at BASE+60 s` of a range query from `start_s` to `end_s`.
async fn counts_over(base: &str, q: &str, start_s: i64, end_s: i64) -> BTreeMap<String, String> {
    let (start, end) = (
        (start_s * 1_000_000_000).to_string(),
        (end_s * 1_000_000_000).to_string(),
    );
    let (st, _, b) = client::try_get(
        &url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", q),
                ("start", &start),
                ("end", &end),
                ("step", "60"),
            ],
        ),
        &[],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{q}: {b}");
    let v: Value = serde_json::from_str(&b).unwrap();
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            let point = s["values"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p[0] == json!(BASE_S + 60))?;
            let m = s["metric"].as_object().unwrap();
            let key: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
                .collect();
            Some((key.join(","), point[1].as_str().unwrap().to_owned()))
        })
        .collect()
}

fn expected(data: &[Entry], with_service: bool) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for e in data {
        let mut key = format!("detected_level={}", e.level());
        if with_service {
            let app = e.stream.iter().find(|(k, _)| *k == "app").unwrap().1;
            key.push_str(&format!(",service_name={app}"));
        }
        *out.entry(key).or_default() += 1;
    }
    out.into_iter().map(|(k, n)| (k, n.to_string())).collect()
}

/// Counts per full label set: stream labels, metadata, `detected_level`
/// (the derived one replaces a stored one) and `service_name`.
fn expected_all(data: &[Entry]) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for e in data {
        let mut labels: BTreeMap<&str, String> = BTreeMap::new();
        for (k, v) in e.stream.iter().chain(&e.metadata) {
            labels.insert(k, (*v).to_owned());
        }
        labels.insert("detected_level", e.level());
        let app = labels["app"].clone();
        labels.insert("service_name", app);
        let key: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        *out.entry(key.join(",")).or_default() += 1;
    }
    out.into_iter().map(|(k, n)| (k, n.to_string())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_levels_in_victorialogs_match_the_row_derivation() {
    let Some(bin) = backend::find_vl_binary() else {
        skip("VictoriaLogs");
        return;
    };
    let lines = lines();
    let data = entries(&lines);
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body(&data)).await;

    // Line by line: VictoriaLogs' level is the row derivation's, or residue.
    let got = vl_levels(&vl.url).await;
    assert_eq!(got.len(), lines.len(), "every line is read back");
    let mut residue = 0;
    for l in &lines {
        let want = level_from_line(&l.line);
        let vl_level = got.get(&l.line).map(String::as_str);
        if vl_level == Some(logsql_ast::line_level::RESIDUE) {
            assert!(!l.exact, "left to the proxy: {:?} ({want})", l.line);
            residue += 1;
            continue;
        }
        assert_eq!(vl_level, Some(want), "{:?}", l.line);
    }
    let exact = lines.iter().filter(|l| l.exact).count();
    assert!(exact * 2 > lines.len() && residue > 0, "{residue} {exact}");

    // Through lokivl: counts by level (and service) equal the row
    // derivation's, with a row budget far below the entries counted (the
    // residue alone is read as rows).
    let budget = residue + 10;
    assert!(
        budget + exact / 2 < lines.len(),
        "reading every line would fail"
    );
    let base = support::start_lokivl_with(&vl.url, |s| {
        s.discovery = engine::discovery::loki_defaults();
        s.work.max_rows = budget;
    })
    .await;
    let q = r#"sum by (detected_level) (count_over_time({app=~".+"}[1m]))"#;
    assert_eq!(counts(&base, q).await, expected(&data, false), "{q}");
    let q = r#"sum by (detected_level, service_name) (count_over_time({app=~".+"}[1m]))"#;
    let by_service = counts(&base, q).await;
    assert_eq!(by_service, expected(&data, true), "{q}");
    // Split into windows of 10 minutes (each window counts the same way).
    let windowed = support::start_lokivl_with(&vl.url, |s| {
        s.discovery = engine::discovery::loki_defaults();
        s.work.max_rows = budget;
        s.cache.windows.interval = std::time::Duration::from_secs(600);
    })
    .await;
    let long = counts_over(&windowed, q, BASE_S - 3600, BASE_S + 3600).await;
    assert_eq!(long, by_service, "{q} over windows");
    // Without `by` every label is kept: the stream's, the metadata and the
    // synthesized ones, as the row derivation gives them.
    let q = r#"count_over_time({app=~".+"}[1m])"#;
    assert_eq!(counts(&base, q).await, expected_all(&data), "{q}");
    // Only the classified lines: no row is read at all.
    let q = r#"sum by (detected_level) (count_over_time({app="lines"} |~ "^[a-z]+ x$" [1m]))"#;
    let want: BTreeMap<String, String> = {
        let re = regex::Regex::new("^[a-z]+ x$").unwrap();
        expected(
            &data
                .iter()
                .filter(|e| e.stream == [("app", "lines")] && re.is_match(&e.line))
                .map(|e| Entry {
                    stream: e.stream.clone(),
                    line: e.line.clone(),
                    metadata: Vec::new(),
                })
                .collect::<Vec<_>>(),
            false,
        )
    };
    assert_eq!(counts(&base, q).await, want, "{q}");

    // Loki itself, when available.
    let Some(loki_bin) = support::loki::find_loki_binary() else {
        skip("Loki");
        return;
    };
    // Loki's discovery defaults instead of the suite config's `off`.
    let loki = support::loki::Loki::start_with(&loki_bin, |c| {
        c.replace("  discover_service_name: []\n", "")
            .replace("  discover_log_levels: false\n", "")
    })
    .await;
    loki.push(push_body(&data)).await;
    let from_loki = loki_levels(&loki.url, data.len()).await;
    // Line by line: where VictoriaLogs classified a line, Loki agrees.
    let mut row_gaps = Vec::new();
    for l in &lines {
        let loki_level = from_loki.get(&l.line).map(String::as_str);
        let vl_level = got.get(&l.line).map(String::as_str);
        if vl_level != Some(logsql_ast::line_level::RESIDUE) {
            assert_eq!(
                vl_level, loki_level,
                "Loki 3.7 and VictoriaLogs: {:?}",
                l.line
            );
        } else if loki_level != Some(level_from_line(&l.line)) {
            row_gaps.push((l.line.clone(), loki_level.map(str::to_owned)));
        }
    }
    // The residue is derived row by row; where that derivation is not
    // Loki's, it is one of these known gaps of the logfmt key search (Loki
    // stops at a syntax error, takes an empty value, and matches the
    // unsanitized `log.level`), never a line VictoriaLogs classified.
    let known = ["a=b=c level=", "level= lvl=", "log.level="];
    for (line, loki_level) in &row_gaps {
        assert!(
            known.iter().any(|k| line.starts_with(k)),
            "row derivation and Loki differ on {line:?}: {loki_level:?}"
        );
    }
}

/// `line → detected_level` as Loki stored it for the stream without levels.
async fn loki_levels(loki: &str, n: usize) -> BTreeMap<String, String> {
    let (start, end) = (
        ((BASE_S - 60) * 1_000_000_000).to_string(),
        ((BASE_S + 60) * 1_000_000_000).to_string(),
    );
    let mut out = BTreeMap::new();
    for _ in 0..40 {
        let (st, _, b) = client::try_get(
            &url(
                loki,
                "/loki/api/v1/query_range",
                &[
                    ("query", r#"{app="lines"}"#),
                    ("start", &start),
                    ("end", &end),
                    ("limit", &n.to_string()),
                ],
            ),
            &[],
        )
        .await
        .map(client::Answer::parts)
        .unwrap();
        assert_eq!(st, 200, "{b}");
        let v: Value = serde_json::from_str(&b).unwrap();
        out.clear();
        for s in v["data"]["result"].as_array().unwrap() {
            let level = s["stream"]["detected_level"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            for e in s["values"].as_array().unwrap() {
                out.insert(e[1].as_str().unwrap().to_owned(), level.clone());
            }
        }
        if out.len() >= n - 24 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    out
}

/// The residue read as rows is bounded: past the row budget or the answer
/// size, a 400 with the bound's wording, never a 5xx.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn residue_rows_are_bounded() {
    let Some(bin) = backend::find_vl_binary() else {
        skip("VictoriaLogs");
        return;
    };
    // Nested JSON keys: every line is residue.
    let data: Vec<Entry> = (0..300)
        .map(|i| Entry {
            stream: vec![("app", "nested")],
            line: format!(
                r#"{{"ctx":{{"id":{i},"level":"warn"}},"msg":"padding padding padding"}}"#
            ),
            metadata: Vec::new(),
        })
        .collect();
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body(&data)).await;
    let q = r#"sum by (detected_level) (count_over_time({app="nested"}[1m]))"#;
    let ask = |base: String| async move {
        let (start, end) = (
            ((BASE_S + 60) * 1_000_000_000).to_string(),
            ((BASE_S + 120) * 1_000_000_000).to_string(),
        );
        client::try_get(
            &url(
                &base,
                "/loki/api/v1/query_range",
                &[
                    ("query", q),
                    ("start", &start),
                    ("end", &end),
                    ("step", "60"),
                ],
            ),
            &[],
        )
        .await
        .map(client::Answer::parts)
        .unwrap()
    };
    let defaults = engine::discovery::loki_defaults;
    // Within the bounds: every line read and derived (warn, nested).
    let base = support::start_lokivl_with(&vl.url, |s| s.discovery = defaults()).await;
    assert_eq!(
        counts(&base, q).await,
        expected(&data, false),
        "residue derived row by row"
    );
    let base = support::start_lokivl_with(&vl.url, |s| {
        s.discovery = defaults();
        s.work.max_rows = 100;
    })
    .await;
    let (st, _, body) = ask(base).await;
    assert_eq!(st, 400, "{body}");
    assert!(
        body.contains("more than 100 entries fall in the query range"),
        "{body}"
    );
    let base = support::start_lokivl_with(&vl.url, |s| {
        s.discovery = defaults();
        s.backend_options.max_response_bytes = 8000;
    })
    .await;
    let (st, _, body) = ask(base).await;
    assert_eq!(st, 400, "{body}");
    assert!(
        body.contains("the query would read too many bytes"),
        "{body}"
    );
}

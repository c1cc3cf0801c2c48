//! Unit tests of the streams encoder.

use super::*;

const T1: &str = "2024-08-22T11:20:00.000000001Z"; // 1724325600000000001
const T2: &str = "2024-08-22T11:20:00.000000002Z";
const T3: &str = "2024-08-22T11:20:00.000000003Z";
const T4: &str = "2024-08-22T11:20:00.000000004Z";
const T5: &str = "2024-08-22T11:20:00.000000005Z";

fn opts(
    direction: Direction,
    limit: usize,
    categorize: bool,
    parsed_prefix: Option<&'static str>,
) -> StreamsOptions {
    StreamsOptions {
        direction,
        limit,
        categorize,
        parsed_prefix,
    }
}

fn back(categorize: bool) -> StreamsOptions {
    opts(Direction::Backward, 100, categorize, None)
}

/// One NDJSON line; `stream` is the `_stream` value, `fields` extra fields.
fn line(time: &str, stream: &str, msg: &str, fields: &[(&str, &str)]) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("_time".into(), time.into());
    obj.insert("_stream_id".into(), "00000000000000001".into());
    obj.insert("_stream".into(), stream.into());
    obj.insert("_msg".into(), msg.into());
    for (k, v) in fields {
        obj.insert((*k).into(), (*v).into());
    }
    let mut s = serde_json::Value::Object(obj).to_string();
    s.push('\n');
    s
}

/// Runs the encoder and splits the answer into the part before `"stats"`
/// (compared byte for byte) and the parsed whole.
fn run(body: &str, o: &StreamsOptions) -> (String, StreamsSummary, serde_json::Value) {
    let mut buf = body.as_bytes().to_vec();
    let mut out = Vec::new();
    let summary = encode_streams(&mut buf, o, &mut out).unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8(out).unwrap_or_default();
    let value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let head = text
        .split(",\"stats\":{")
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(text.ends_with("}}}}"), "{text}");
    (head, summary, value)
}

const HEAD: &str = r#"{"status":"success","data":{"resultType":"streams","#;
const FLAG: &str = r#""encodingFlags":["categorize-labels"],"#;

fn api_rows() -> String {
    let s = r#"{app="api",env="prod"}"#;
    line(
        T1,
        s,
        "one",
        &[("app", "api"), ("env", "prod"), ("trace_id", "abc")],
    ) + &line(T2, s, "two", &[("app", "api"), ("env", "prod")])
        + &line(
            T3,
            s,
            "three",
            &[("app", "api"), ("env", "prod"), ("trace_id", "abc")],
        )
}

#[test]
fn without_categorize_metadata_splits_streams_into_two_tuples() {
    let (head, summary, v) = run(&api_rows(), &back(false));
    // `{app="api", env="prod", trace_id="abc"}` < `{app="api", env="prod"}` (',' < '}').
    let expected = String::from(HEAD)
        + r#""result":["#
        + r#"{"stream":{"app":"api","env":"prod","trace_id":"abc"},"values":[["1724325600000000003","three"],["1724325600000000001","one"]]},"#
        + r#"{"stream":{"app":"api","env":"prod"},"values":[["1724325600000000002","two"]]}"#
        + "]";
    assert_eq!(head, expected);
    assert_eq!(
        summary,
        StreamsSummary {
            entries: 3,
            streams: 2,
            bytes: 11,
            tied_cut: None,
        }
    );
    assert_eq!(v["data"]["stats"]["summary"]["totalEntriesReturned"], 3);
    assert_eq!(v["data"]["stats"]["summary"]["totalLinesProcessed"], 3);
    assert!(v["data"].get("encodingFlags").is_none());
}

#[test]
fn with_categorize_every_entry_is_a_three_tuple() {
    let (head, summary, _) = run(&api_rows(), &back(true));
    let expected = String::from(HEAD)
        + FLAG
        + r#""result":[{"stream":{"app":"api","env":"prod"},"values":["#
        + r#"["1724325600000000003","three",{"structuredMetadata":{"trace_id":"abc"}}],"#
        + r#"["1724325600000000002","two",{}],"#
        + r#"["1724325600000000001","one",{"structuredMetadata":{"trace_id":"abc"}}]]}]"#;
    assert_eq!(head, expected);
    assert_eq!(summary.streams, 1);
}

#[test]
fn streams_sort_by_label_string() {
    // `{app="a", env="x"}` sorts before `{app="a"}` because ',' < '}'.
    let body = line(T1, r#"{app="b"}"#, "b", &[])
        + &line(T2, r#"{app="a"}"#, "a", &[])
        + &line(T3, r#"{app="a",env="x"}"#, "ax", &[])
        + &line(T4, r#"{app="B"}"#, "B", &[]);
    let (head, _, _) = run(&body, &back(true));
    let expected = String::from(HEAD)
        + FLAG
        + r#""result":["#
        + r#"{"stream":{"app":"B"},"values":[["1724325600000000004","B",{}]]},"#
        + r#"{"stream":{"app":"a","env":"x"},"values":[["1724325600000000003","ax",{}]]},"#
        + r#"{"stream":{"app":"a"},"values":[["1724325600000000002","a",{}]]},"#
        + r#"{"stream":{"app":"b"},"values":[["1724325600000000001","b",{}]]}]"#;
    assert_eq!(head, expected);
}

fn mixed_order_rows() -> String {
    // Not in time order, as VictoriaLogs may send them.
    line(T3, r#"{app="a"}"#, "a3", &[])
        + &line(T1, r#"{app="b"}"#, "b1", &[])
        + &line(T5, r#"{app="a"}"#, "a5", &[])
        + &line(T2, r#"{app="a"}"#, "a2", &[])
        + &line(T4, r#"{app="b"}"#, "b4", &[])
}

#[test]
fn backward_limit_keeps_newest_across_streams() {
    let (head, summary, _) = run(
        &mixed_order_rows(),
        &opts(Direction::Backward, 3, false, None),
    );
    let expected = String::from(HEAD)
        + r#""result":["#
        + r#"{"stream":{"app":"a"},"values":[["1724325600000000005","a5"],["1724325600000000003","a3"]]},"#
        + r#"{"stream":{"app":"b"},"values":[["1724325600000000004","b4"]]}]"#;
    assert_eq!(head, expected);
    assert_eq!(summary.entries, 3);
}

#[test]
fn forward_limit_keeps_oldest_across_streams() {
    let (head, _, v) = run(
        &mixed_order_rows(),
        &opts(Direction::Forward, 3, false, None),
    );
    let expected = String::from(HEAD)
        + r#""result":["#
        + r#"{"stream":{"app":"a"},"values":[["1724325600000000002","a2"],["1724325600000000003","a3"]]},"#
        + r#"{"stream":{"app":"b"},"values":[["1724325600000000001","b1"]]}]"#;
    assert_eq!(head, expected);
    assert_eq!(v["data"]["stats"]["summary"]["totalLinesProcessed"], 5);
    assert_eq!(v["data"]["stats"]["summary"]["totalEntriesReturned"], 3);
}

#[test]
fn forward_without_limit_pressure_orders_oldest_first() {
    let (head, _, _) = run(
        &mixed_order_rows(),
        &opts(Direction::Forward, 100, false, None),
    );
    assert!(head.contains(r#"{"stream":{"app":"b"},"values":[["1724325600000000001","b1"],["1724325600000000004","b4"]]}"#), "{head}");
}

fn parsed_rows() -> String {
    let s = r#"{app="api"}"#;
    line(
        T1,
        s,
        r#"{"level":"error","app":"x"}"#,
        &[
            ("app", "api"),
            ("trace_id", "sm"),
            ("p.level", "error"),
            ("p.app", "x"),
            ("p.trace_id", "parsed"),
        ],
    )
}

#[test]
fn parsed_labels_with_extracted_collision_categorized() {
    let (head, _, _) = run(
        &parsed_rows(),
        &opts(Direction::Backward, 100, true, Some("p.")),
    );
    let expected = String::from(HEAD)
        + FLAG
        + r#""result":[{"stream":{"app":"api"},"values":[["1724325600000000001","{\"level\":\"error\",\"app\":\"x\"}","#
        + r#"{"parsed":{"app_extracted":"x","level":"error","trace_id":"parsed"}}]]}]"#;
    assert_eq!(head, expected);
}

#[test]
fn parsed_labels_merge_into_stream_without_categorize() {
    let (head, _, _) = run(
        &parsed_rows(),
        &opts(Direction::Backward, 100, false, Some("p.")),
    );
    let expected = String::from(HEAD)
        + r#""result":[{"stream":{"app":"api","app_extracted":"x","level":"error","trace_id":"parsed"},"#
        + r#""values":[["1724325600000000001","{\"level\":\"error\",\"app\":\"x\"}"]]}]"#;
    assert_eq!(head, expected);
}

#[test]
fn metadata_and_parsed_both_present() {
    let body = line(
        T1,
        r#"{app="api"}"#,
        "m",
        &[("app", "api"), ("trace_id", "t1"), ("p.status", "500")],
    );
    let (head, _, _) = run(&body, &opts(Direction::Backward, 100, true, Some("p.")));
    assert!(
        head.contains(r#"["1724325600000000001","m",{"structuredMetadata":{"trace_id":"t1"},"parsed":{"status":"500"}}]"#),
        "{head}"
    );
}

#[test]
fn dotted_names_are_sanitized() {
    let body = line(
        T1,
        r#"{service.name="checkout",k8s.namespace="prod"}"#,
        "m",
        &[
            ("service.name", "checkout"),
            ("k8s.namespace", "prod"),
            ("k8s.pod.name", "pod-1"),
            ("9lives", "x"),
        ],
    );
    let (head, _, _) = run(&body, &back(true));
    let expected = String::from(HEAD)
        + FLAG
        + r#""result":[{"stream":{"k8s_namespace":"prod","service_name":"checkout"},"values":[["1724325600000000001","m","#
        + r#"{"structuredMetadata":{"_9lives":"x","k8s_pod_name":"pod-1"}}]]}]"#;
    assert_eq!(head, expected);
    let (head, _, _) = run(&body, &back(false));
    assert!(
        head.contains(r#"{"stream":{"_9lives":"x","k8s_namespace":"prod","k8s_pod_name":"pod-1","service_name":"checkout"}"#),
        "{head}"
    );
}

#[test]
fn non_ascii_names_become_one_underscore_per_character() {
    let body = line(
        T1,
        r#"{app="a"}"#,
        "m",
        &[("héllo.wörld", "v"), ("ünï", "w")],
    );
    let (head, _, _) = run(&body, &back(true));
    assert!(
        head.contains(r#"{"structuredMetadata":{"_n_":"w","h_llo_w_rld":"v"}}"#),
        "{head}"
    );
}

#[test]
fn escapes_and_unicode() {
    let body = line(
        T1,
        r#"{app="we\"ird \\ é"}"#,
        "quote \" <b> & \n tab\t é 😀 \u{1}",
        &[("k", "v\"<")],
    );
    let (head, _, _) = run(&body, &back(true));
    let expected = String::from(HEAD)
        + FLAG
        + r#""result":[{"stream":{"app":"we\"ird \\ é"},"values":[["1724325600000000001","#
        + r#""quote \" \u003cb\u003e \u0026 \n tab\t é 😀 \u0001","#
        + r#"{"structuredMetadata":{"k":"v\"\u003c"}}]]}]"#;
    assert_eq!(head, expected);
}

#[test]
fn empty_result() {
    for categorize in [false, true] {
        let (head, summary, v) = run("", &back(categorize));
        let flag = if categorize { FLAG } else { "" };
        assert_eq!(head, String::from(HEAD) + flag + r#""result":[]"#);
        assert_eq!(summary, StreamsSummary::default());
        assert_eq!(v["data"]["stats"]["summary"]["totalEntriesReturned"], 0);
    }
}

#[test]
fn zero_limit_returns_no_entries() {
    let (head, _, _) = run(&api_rows(), &opts(Direction::Backward, 0, false, None));
    assert_eq!(head, String::from(HEAD) + r#""result":[]"#);
}

#[test]
fn equal_timestamps_keep_backend_order() {
    let body = line(T1, r#"{app="a"}"#, "first", &[]) + &line(T1, r#"{app="a"}"#, "second", &[]);
    for dir in [Direction::Backward, Direction::Forward] {
        let (head, _, _) = run(&body, &opts(dir, 100, false, None));
        assert!(
            head.contains(r#"[["1724325600000000001","first"],["1724325600000000001","second"]]"#),
            "{head}"
        );
    }
}

#[test]
fn malformed_input_is_an_error() {
    for bad in [
        "{",
        "{\"_msg\":\"no time\"}\n",
        "{\"_time\":\"2024-08-22T11:20:00Z\",\"_stream\":\"{app=\"}\n",
    ] {
        let mut buf = bad.as_bytes().to_vec();
        let mut out = Vec::new();
        assert!(
            encode_streams(&mut buf, &back(false), &mut out).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn output_matches_serde_json_reference_for_many_rows() {
    // Cross-check the hand-written writer against serde_json on varied data.
    let mut body = String::new();
    for i in 0..200 {
        let t = format!("2024-08-22T11:20:{:02}.{:09}Z", i % 60, i);
        let stream = format!("{{app=\"a{}\",env=\"e{}\"}}", i % 3, i % 2);
        let msg = format!("msg {i} <{}> \"q\"", "x".repeat(i % 7));
        body += &line(
            &t,
            &stream,
            &msg,
            &[
                ("app", "ignored-copy"),
                ("trace_id", &format!("t{}", i % 4)),
            ],
        );
    }
    let (_, summary, v) = run(&body, &opts(Direction::Backward, 150, true, None));
    assert_eq!(summary.entries, 150);
    let result = v["data"]["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(result.len(), 6);
    let mut total = 0;
    let mut last_key = String::new();
    for s in &result {
        let labels = s["stream"].as_object().cloned().unwrap_or_default();
        let key = format!(
            "{{{}}}",
            labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(key > last_key, "{key} after {last_key}");
        last_key = key;
        let values = s["values"].as_array().cloned().unwrap_or_default();
        let ts: Vec<i64> = values
            .iter()
            .filter_map(|e| e[0].as_str()?.parse().ok())
            .collect();
        assert!(ts.windows(2).all(|w| w[0] >= w[1]), "backward order");
        for e in &values {
            assert_eq!(e.as_array().map(Vec::len), Some(3));
            assert!(e[2]["structuredMetadata"]["trace_id"].is_string());
        }
        total += values.len();
    }
    assert_eq!(total, 150);
}

/// Five streams with one entry each at one timestamp, in the order
/// VictoriaLogs might return them.
fn tied_rows() -> String {
    ["edge", "api", "batch", "db", "cron"]
        .iter()
        .enumerate()
        .map(|(i, app)| {
            let shard = 4 + ["api", "batch", "cron", "db", "edge"]
                .iter()
                .position(|a| a == app)
                .unwrap_or(0);
            let stream = format!(r#"{{app="{app}",namespace="dev",shard="{shard}"}}"#);
            line(T3, &stream, &format!("line {i}"), &[])
        })
        .collect()
}

fn apps(v: &serde_json::Value) -> Vec<String> {
    v["data"]["result"]
        .as_array()
        .map(|r| {
            r.iter()
                .map(|s| s["stream"]["app"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Loki 3.7.8 kept `cron`, `db`, `api` of these streams at `limit=3`, in
/// both directions (the order of their stream hashes, `crate::tie`),
/// whatever order the rows came in.
#[test]
fn a_limit_among_equal_timestamps_keeps_what_loki_keeps() {
    for direction in [Direction::Backward, Direction::Forward] {
        for categorize in [false, true] {
            let (_, summary, v) = run(&tied_rows(), &opts(direction, 3, categorize, None));
            assert_eq!(summary.entries, 3);
            assert_eq!(summary.tied_cut, Some(1_724_325_600_000_000_003));
            // Streams are written in label order.
            assert_eq!(apps(&v), ["api", "cron", "db"], "{direction:?}");
            let (_, _, one) = run(&tied_rows(), &opts(direction, 1, categorize, None));
            assert_eq!(apps(&one), ["cron"]);
            // Nothing cut, or a cut between two timestamps: no tie to resolve.
            let (_, all, _) = run(&tied_rows(), &opts(direction, 5, categorize, None));
            assert_eq!(all.tied_cut, None);
            let two = tied_rows() + &line(T4, r#"{app="new"}"#, "new", &[]);
            let (_, newest, _) = run(&two, &opts(Direction::Backward, 1, categorize, None));
            assert_eq!(newest.tied_cut, None);
            // A row beyond the tied timestamp: every row of it is in the
            // input, and the entries kept are Loki's without a second read.
            let older = line(T1, r#"{app="old"}"#, "old", &[]) + &tied_rows();
            let (_, whole, v) = run(&older, &opts(Direction::Backward, 3, categorize, None));
            assert_eq!(whole.tied_cut, None);
            assert_eq!(apps(&v), ["api", "cron", "db"]);
            let newer = tied_rows() + &line(T5, r#"{app="new"}"#, "new", &[]);
            let (_, whole, v) = run(&newer, &opts(Direction::Forward, 3, categorize, None));
            assert_eq!(whole.tied_cut, None);
            assert_eq!(apps(&v), ["api", "cron", "db"]);
        }
    }
}

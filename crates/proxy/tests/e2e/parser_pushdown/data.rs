//! The data the parser-pushdown parity test pushes: Promtail-style streams
//! (stream labels only, the JSON or logfmt text stored as the line) and the
//! same JSON streams pushed through VictoriaLogs' own Loki endpoint, which
//! unpacks each JSON line into fields. Every dirty stream is mostly clean
//! lines with one line in six of its kind, so both the guard's counts and
//! the fallback's values matter; the `metadata` stream carries structured
//! metadata under the names the queries read.

use std::collections::BTreeMap;

use crate::support::backend::VictoriaLogs;
use crate::support::client;
use crate::support::dataset::{self, Entry};

pub(super) const SEC: i64 = 1_000_000_000;
/// 2026-08-22T10:00:00Z.
pub(super) const BASE_NS: i64 = 1_787_392_800 * SEC;
/// Entries per stream: one every 40 s over two hours.
const PER_STREAM: i64 = 180;
const SPACING_NS: i64 = 40 * SEC;
/// The range every query asks: five minutes before the first entry to ten
/// minutes after the last.
pub(super) const START_NS: i64 = BASE_NS - 5 * 60 * SEC;
pub(super) const END_NS: i64 = BASE_NS + PER_STREAM * SPACING_NS + 10 * 60 * SEC;

/// The JSON kinds: `clean` and one kind of dirt each.
pub(super) const JSON_KINDS: [&str; 12] = [
    "clean",
    "metadata",
    "notjson",
    "truncated",
    "dupkey",
    "sanitized",
    "escape",
    "nested",
    "nullempty",
    "numeric",
    "labelclash",
    "levelclash",
];

/// The logfmt kinds (stored raw only).
pub(super) const LOGFMT_KINDS: [&str; 2] = ["logfmt-clean", "logfmt-dirty"];

fn clean_json(i: i64) -> String {
    let level = ["info", "warn", "error", "debug"][(i % 4) as usize];
    let method = ["GET", "POST", "PUT", "DELETE", "GET"][(i % 5) as usize];
    let status = [200, 200, 404, 500, 503, 201, 400][(i % 7) as usize];
    let latency = (i * 37) % 250;
    format!(
        r#"{{"level":"{level}","method":"{method}","status":{status},"latency_ms":{latency},"path":"/v1/items/{i}","msg":"request {i}"}}"#
    )
}

fn clean_logfmt(i: i64) -> String {
    let level = ["info", "warn", "error", "debug"][(i % 4) as usize];
    let method = ["GET", "POST", "PUT", "DELETE", "GET"][(i % 5) as usize];
    let status = [200, 200, 404, 500, 503, 201, 400][(i % 7) as usize];
    let latency = (i * 37) % 250;
    format!(
        r#"level={level} method={method} status={status} latency_ms={latency} path=/v1/items/{i} msg="request {i}""#
    )
}

/// The dirty lines of `kind`, used in turn.
fn dirt(kind: &str) -> &'static [&'static str] {
    match kind {
        "notjson" => &[
            "GET /v1/items/7 500 120ms",
            "level=error status=500 method=GET latency_ms=300",
            "plain text, status 503",
            "",
            r#"[{"status":500,"method":"GET"}]"#,
            r#""status""#,
            "500",
            "{}",
            "null",
        ],
        "truncated" => &[
            r#"{"level":"error","method":"GET","status":500,"latency_ms":1"#,
            r#"{"level":"info","status":"#,
            r#"{"status":503, "method":"GET""#,
            r#"{"status":500,"method":"GET","latency_ms":200}}"#,
            r#"{"status":500,"method":"GET","latency_ms":210} trailing"#,
            r#"{"status":500,"method":"POST"}{"status":200,"method":"GET"}"#,
        ],
        "dupkey" => &[
            r#"{"status":200,"status":500,"method":"GET","latency_ms":5}"#,
            r#"{"method":"GET","method":"POST","status":404,"latency_ms":300}"#,
            r#"{"latency_ms":10,"latency_ms":900,"status":500,"level":"info","level":"error"}"#,
            r#"{"status":500,"method":"PUT","latency_ms":150,"status":"abc"}"#,
        ],
        "sanitized" => &[
            r#"{"status-code":500,"method":"GET","latency.ms":700,"level":"error"}"#,
            r#"{" status":503,"method":"POST","latency":{"ms":450}}"#,
            r#"{"status":500,"latency-ms":800,"latency_ms":3,"method":"PUT"}"#,
            r#"{"method":"GET","status":404,"latency_ms":20,"Status":500,"me.thod":"POST"}"#,
            r#"{"status ":503,"method":"GET"," latency_ms ":7}"#,
            r#"{"status":200,"sta tus":500,"method":"GET","latency_ms":1}"#,
        ],
        "escape" => &[
            r#"{"status":500,"method":"G\u0045T","latency_ms":120}"#,
            r#"{"st\u0061tus":503,"method":"GET","latency_ms":5}"#,
            r#"{"status":404,"level":"err\u006fr","msg":"caf\u00e9 \ud83d\ude00"}"#,
            r#"{"method":"GET\n","status":"50\u0030","latency_ms":"1\u00320","msg":"a\"b\\c"}"#,
            r#"{ "status" : 503 , "method" : "POST" , "latency_ms" : 42 }"#,
            "{\n  \"status\": 500,\n  \"method\": \"GET\",\n  \"latency_ms\": 180\n}",
            r#"{"status":500,"method":"GÉT","latency_ms":3,"msg":"tab\there ü"}"#,
            r#"{"status":404,"method":"GET","latency_ms":8,"msg":"latency ms status status"}"#,
            r#"{"status":500,"method":"P\/UT","latency_ms":"4\/2"}"#,
        ],
        "nested" => &[
            r#"{"status":[500,404],"method":"GET","latency_ms":5}"#,
            r#"{"status":{"code":500},"method":"POST","latency_ms":9}"#,
            r#"{"method":["GET"],"status":500,"latency_ms":[1,2]}"#,
            r#"{"latency_ms":{"p99":900},"status":500,"method":"GET","level":{"name":"error"}}"#,
        ],
        "nullempty" => &[
            r#"{"status":null,"method":"GET","latency_ms":null}"#,
            r#"{"status":"","method":"","latency_ms":"","level":""}"#,
            r#"{"level":null,"status":500,"latency_ms":7,"method":"GET"}"#,
            r#"{"method":"POST","status":true,"latency_ms":false}"#,
        ],
        "numeric" => &[
            r#"{"status":"1e3","method":"GET","latency_ms":1e3}"#,
            r#"{"status":500.0,"method":"GET","latency_ms":"500.0"}"#,
            r#"{"status":" 500","method":"PUT","latency_ms":" 120"}"#,
            r#"{"status":"0x1f","method":"GET","latency_ms":"0x1f"}"#,
            r#"{"status":"abc","method":"POST","latency_ms":"abc"}"#,
            r#"{"status":5e2,"method":"GET","latency_ms":-5}"#,
            r#"{"status":"500","method":"GET","latency_ms":"12.5"}"#,
            r#"{"status":500,"method":"GET","latency_ms":12345678901234567890}"#,
            r#"{"status":"+500","method":"GET","latency_ms":"1_000"}"#,
            r#"{"status":"0x1p9","method":"GET","latency_ms":"0x1p4"}"#,
            r#"{"status":"Inf","method":"PUT","latency_ms":"NaN"}"#,
            r#"{"status":"500.","method":"GET","latency_ms":".5"}"#,
            r#"{"status":"0500","method":"GET","latency_ms":-0}"#,
            r#"{"status":1234567890123456,"method":"GET","latency_ms":9007199254740993}"#,
            r#"{"status":"-Inf","method":"POST","latency_ms":"+Inf"}"#,
        ],
        "labelclash" => &[
            r#"{"app":"other","status":500,"method":"GET","latency_ms":30}"#,
            r#"{"app":"","status":404,"method":"POST","latency_ms":130}"#,
            r#"{"kind":"x","shape":"y","status":503,"method":"GET","latency_ms":230}"#,
        ],
        "logfmt-dirty" => &[
            r#"level=error method="GET" status="500" latency_ms=" 30""#,
            "status=500 status=200 method=GET latency_ms=5",
            "method= status=500 latency_ms=",
            "method status=503 latency_ms=7 bare",
            r#"msg="unterminated status=500 method=GET"#,
            r#"status=500 msg="esc \"q\" \\ \n" method=PUT latency_ms=99"#,
            "status-code=500 latency.ms=5 method=GET",
            "level=error level=info status=404 latency_ms=1e3",
            "status=5e2 latency_ms=12.5 method=POST app=other",
            "=500 ==x status==1 latency_ms=\"12\"x",
        ],
        _ => &[],
    }
}

/// Line `i` of a stream of `kind`.
fn line(kind: &str, i: i64) -> String {
    let logfmt = kind.starts_with("logfmt");
    let dirty = dirt(kind);
    if !dirty.is_empty() && (i % 6 == 3 || kind == "labelclash" && i % 2 == 1) {
        return dirty[((i / 6) as usize) % dirty.len()].to_owned();
    }
    if logfmt {
        clean_logfmt(i)
    } else {
        clean_json(i)
    }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Structured metadata of entry `i` of the `metadata` kind: stored fields
/// that Loki reads before the line's keys (which become `<key>_extracted`).
fn metadata(kind: &str, i: i64) -> BTreeMap<String, String> {
    if kind != "metadata" {
        return BTreeMap::new();
    }
    match i % 5 {
        1 => labels(&[("status", "503")]),
        2 => labels(&[("latency_ms", "999"), ("trace_id", "t1")]),
        3 => labels(&[("method", "PATCH"), ("level", "fatal")]),
        4 => labels(&[("latency_ms", "12.5"), ("status", "abc")]),
        _ => BTreeMap::new(),
    }
}

/// The entries of one stream of `kind` with `stream` labels; `offset`
/// keeps the streams' times apart.
fn stream(kind: &str, stream: BTreeMap<String, String>, offset: i64) -> Vec<Entry> {
    (0..PER_STREAM)
        .map(|i| Entry {
            // Odd sub-second parts keep nanosecond precision honest.
            time_ns: BASE_NS + i * SPACING_NS + offset * 1_300_000_000 + (i * 7_919_123) % SEC,
            stream: stream.clone(),
            line: line(kind, i),
            metadata: metadata(kind, i),
        })
        .collect()
}

/// The entries of `shape`: two apps of clean JSON, one stream per dirty
/// kind (`levelclash` also carries a stream label `level`), and for `raw`
/// the logfmt streams.
pub(super) fn entries(shape: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut offset = 0;
    for kind in JSON_KINDS {
        let apps: &[&str] = if kind == "clean" {
            &["api", "web"]
        } else {
            &["api"]
        };
        for app in apps {
            let mut l = labels(&[("app", app), ("kind", kind), ("shape", shape)]);
            if kind == "levelclash" {
                l.insert("level".to_owned(), "warn".to_owned());
            }
            out.extend(stream(kind, l, offset));
            offset += 1;
        }
    }
    if shape == "raw" {
        for kind in LOGFMT_KINDS {
            let l = labels(&[("app", "worker"), ("kind", kind), ("shape", shape)]);
            out.extend(stream(kind, l, offset));
            offset += 1;
        }
    }
    out
}

/// Pushes both shapes into `vl` and makes them searchable: `shape="raw"`
/// keeps the line as `_msg` with the stream labels only
/// (`disable_message_parsing=1`, as lokivl's push forwards it);
/// `shape="fields"` is VictoriaLogs' Loki endpoint unpacking the JSON.
pub(super) async fn push(vl: &VictoriaLogs) {
    vl.ingest(dataset::push_body(&entries("raw"))).await;
    let a = client::try_post(
        &format!("{}/insert/loki/api/v1/push", vl.url),
        "application/json",
        dataset::push_body(&entries("fields")).into_bytes(),
    )
    .await
    .expect("push to VictoriaLogs");
    assert!(
        a.status == 204 || a.status == 200,
        "push failed: {} {}",
        a.status,
        a.body
    );
    vl.flush().await;
}

/// The kinds also queried as VictoriaLogs' Loki endpoint stored them
/// (their keys unpacked into fields, the line gone): a pushdown that read
/// the stored fields instead of the line would answer there. `levelclash`
/// then holds a field `level` beside its stream label `level` with another
/// value; Loki's value is the label.
const FIELDS_KINDS: [&str; 6] = [
    "clean",
    "notjson",
    "dupkey",
    "nested",
    "numeric",
    "levelclash",
];

/// The stream selectors the queries run on: each kind stored raw, some
/// stored as fields, and two that span several kinds.
pub(super) fn selectors() -> Vec<String> {
    let mut out = Vec::new();
    for kind in JSON_KINDS {
        out.push(format!(r#"{{kind="{kind}", shape="raw"}}"#));
    }
    for kind in FIELDS_KINDS {
        out.push(format!(r#"{{kind="{kind}", shape="fields"}}"#));
    }
    for kind in LOGFMT_KINDS {
        out.push(format!(r#"{{kind="{kind}"}}"#));
    }
    out.push(r#"{shape="raw", kind=~"clean|dupkey|numeric"}"#.to_owned());
    out.push(r#"{app=~".+"}"#.to_owned());
    out
}

//! The log-query side of the parser pushdown: `| json | <label filters>`
//! (and `| logfmt | …`) becomes a VictoriaLogs prefilter (`logsql_ast::add_parser_prefilter`)
//! while the proxy still runs the whole pipeline. The prefilter may only
//! drop rows Loki drops, so both instances (`--parser-pushdown true` and
//! `false`) must return the same streams and entries for every template,
//! selector and direction, over the same clean and dirty data as the
//! metric test (not JSON, truncated, duplicate keys, sanitized keys,
//! escapes, nested objects, `null`/`""`, numbers that are not plain
//! integers, keys equal to stream labels or structured metadata, and the
//! JSON stored as fields). Rows that fail to parse come back with
//! `__error__` in both when Loki keeps them.

use serde_json::Value;

use super::data;
use crate::support::client::{self, url};

/// Log queries over `SEL`; each has label filters right after `PARSER`.
const TEMPLATES: &[&str] = &[
    "SEL | PARSER | status >= 400",
    "SEL | PARSER | status == 500",
    r#"SEL | PARSER | method=~"POST|PUT""#,
    r#"SEL | PARSER | level="error""#,
    r#"SEL | PARSER | level!="info""#,
    r#"SEL | PARSER | level="""#,
    "SEL | PARSER | status >= 200 | status < 500 | latency_ms > 100",
    r#"SEL | PARSER | status >= 400 | level="error" | line_format "{{.method}} {{.status}}""#,
    r#"SEL | PARSER | method!="GET" or status > 300"#,
    r#"SEL | PARSER | path=~"/v1/items/1.*" | __error__="""#,
    "SEL | PARSER | latency_ms < 50 | drop path",
    "SEL | PARSER | app_extracted=\"x\" or status != 200",
];

/// `data.result` of a log query (no timings), or the error.
async fn ask(base: &str, q: &str, direction: &str) -> (u16, Value) {
    let a = client::try_get(
        &url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", q),
                ("start", &data::START_NS.to_string()),
                ("end", &data::END_NS.to_string()),
                ("limit", "100"),
                ("direction", direction),
            ],
        ),
        &[],
    )
    .await
    .unwrap_or_else(|e| panic!("{q}: {e}"));
    let status = a.status.as_u16();
    if status != 200 {
        return (status, Value::String(a.body));
    }
    let v: Value = serde_json::from_str(&a.body).unwrap_or_else(|e| panic!("{q}: {e}"));
    (status, v["data"]["result"].clone())
}

/// The first stream that differs, or both answers when not two lists.
fn first_difference(on: &(u16, Value), off: &(u16, Value)) -> String {
    let short = |v: &Value| v.to_string().chars().take(600).collect::<String>();
    if let (Some(a), Some(b)) = (on.1.as_array(), off.1.as_array()) {
        let i = (0..a.len().max(b.len()))
            .find(|&i| a.get(i) != b.get(i))
            .unwrap_or(0);
        let at = |v: &Vec<Value>| v.get(i).map_or("none".to_owned(), short);
        return format!(
            "    {} and {} streams; stream {i}:\n    on:  {}\n    off: {}",
            a.len(),
            b.len(),
            at(a),
            at(b)
        );
    }
    format!(
        "    on:  {} {}\n    off: {} {}",
        on.0,
        short(&on.1),
        off.0,
        short(&off.1)
    )
}

fn entries(v: &Value) -> usize {
    v.as_array().map_or(0, |s| {
        s.iter()
            .map(|s| s["values"].as_array().map_or(0, Vec::len))
            .sum()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parser_filters_in_victorialogs_keep_every_entry_loki_keeps() {
    let Some((_vl, [(on_tap, on), (off_tap, off)])) = super::pair().await else {
        return;
    };
    let (mut compared, mut with_entries, mut prefiltered, mut errored) = (0, 0, 0, 0);
    let mut mismatches = Vec::new();
    for sel in data::selectors() {
        // logfmt on the logfmt streams, the clean JSON and the mixes, as the
        // metric test.
        let logfmt = !sel.contains("kind=\"") || sel.contains("logfmt") || sel == super::CLEAN_RAW;
        let parsers: &[&str] = if logfmt {
            &["json", "logfmt"]
        } else {
            &["json"]
        };
        for (parser, template) in parsers
            .iter()
            .flat_map(|p| TEMPLATES.iter().map(move |t| (*p, t)))
        {
            let q = template.replace("SEL", &sel).replace("PARSER", parser);
            for direction in ["backward", "forward"] {
                let (mark_on, mark_off) = (on_tap.len(), off_tap.len());
                let (a_on, a_off) = tokio::join!(ask(&on, &q, direction), ask(&off, &q, direction));
                let (calls_on, calls_off) = (on_tap.since(mark_on), off_tap.since(mark_off));
                compared += 1;
                with_entries += usize::from(entries(&a_off.1) > 0);
                errored += usize::from(a_off.1.to_string().contains("JSONParserErr"));
                // The path: the prefilter on one side only.
                assert!(
                    !calls_off.iter().any(|c| c.unpacks(parser)),
                    "{q}: off unpacked"
                );
                if calls_on.iter().any(|c| c.unpacks(parser)) {
                    prefiltered += 1;
                }
                if a_on != a_off {
                    mismatches.push(format!(
                        "{direction} {q}\n{}",
                        first_difference(&a_on, &a_off)
                    ));
                }
            }
        }
    }
    println!(
        "{compared} log query pairs: {with_entries} with entries, {errored} with JSONParserErr, {prefiltered} prefiltered, {} mismatches",
        mismatches.len()
    );
    // Not vacuous: most answers hold entries, errors included, and the
    // prefilter ran on every pair but those whose filters it cannot cover.
    assert!(with_entries * 2 > compared, "{with_entries} of {compared}");
    assert!(errored > 0);
    assert!(
        prefiltered * 10 > compared * 9,
        "{prefiltered} of {compared} prefiltered"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

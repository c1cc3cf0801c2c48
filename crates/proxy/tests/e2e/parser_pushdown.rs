//! Parser pushdown (issue 18 item 1) changes where a metric query's parser
//! runs, never its answer: two lokivl instances in front of one real
//! VictoriaLogs, one with the default `--parser-pushdown true`, one with
//! `false` (the proxy path, itself differential-tested against Loki), both
//! without a response cache, answer every query of [`queries::QUERIES`]
//! over every stream selector of [`data::selectors`] with the same values
//! (same series, same points, or the same error), at a 60 s step (and 5 m
//! on the clean, numeric and non-JSON streams).
//!
//! The data is Promtail-style (stream labels only, the JSON or logfmt text
//! as the line) and the same JSON as VictoriaLogs' own Loki endpoint stores
//! it (keys unpacked into fields); besides clean streams it holds a stream
//! per kind of line on which VictoriaLogs' JSON parser may read other
//! labels than Loki's: not JSON, truncated, duplicate keys, keys Loki
//! sanitizes onto a needed name, `\u` escapes, arrays and objects, `null`
//! and `""`, numbers that are not plain integers (`1_000`, `0x1p4`, `NaN`,
//! `-0`, …), JSON keys equal to stream labels or to structured metadata.
//!
//! The test also proves the pushdown happens, from the `/select` calls each
//! instance sent ([`tap::OrderedTap`]): on clean JSON and clean logfmt with
//! the pushdown on, the pushed queries send `unpack_json` (`unpack_logfmt`)
//! and no row query, the parser-free `sum` neither, the proxy-path queries
//! a row query; with the pushdown off, a row query; on dirty JSON streams,
//! the guarded stats query is followed by a row query (the fallback).

mod data;
mod logs;
mod queries;
mod tap;

use serde_json::Value;

use crate::support;
use crate::support::backend::{self, VictoriaLogs};
use crate::support::client::{self, url};
use queries::{JSON_ONLY, Path, QUERIES, fill, tolerant};
use tap::{Call, OrderedTap};

/// The selector of clean JSON stored raw: where the path is asserted.
const CLEAN_RAW: &str = r#"{kind="clean", shape="raw"}"#;
/// The selector of clean logfmt: the path is asserted there too.
const CLEAN_LOGFMT: &str = r#"{kind="logfmt-clean"}"#;
/// Numbers Go and VictoriaLogs read differently.
const NUMERIC_RAW: &str = r#"{kind="numeric", shape="raw"}"#;
/// Lines that are not JSON.
const NOTJSON_RAW: &str = r#"{kind="notjson", shape="raw"}"#;

/// `(kind stored raw, query template)` that must fall back to the rows
/// with the pushdown on: the guard counts suspect lines there.
const FALLBACKS: &[(&str, &str)] = &[
    (
        "dupkey",
        "sum(count_over_time(SEL | PARSER | status == 500 [5m]))",
    ),
    ("numeric", "sum(rate(SEL | PARSER | status >= 400 [5m]))"),
    (
        "escape",
        r#"sum by (method) (count_over_time(SEL | PARSER | method=~"POST|PUT" [1m]))"#,
    ),
    (
        "nested",
        "sum(count_over_time(SEL | PARSER | status == 500 [5m]))",
    ),
    // A non-JSON line that no filter drops fails the query in Loki
    // (`JSONParserErr`, with the line's labels), which only the rows can
    // say. (A numeric filter, or `__error__=""`, drops it in Loki too, so
    // the guard may push those down.)
    (
        "notjson",
        "topk(2, sum by (method) (rate(SEL | PARSER [5m])))",
    ),
];

/// One answer of lokivl, as compared: the status, and for a 200 the JSON
/// without `data.stats` (timings), else the text.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    json: Option<Value>,
    text: String,
}

impl Answer {
    fn series(&self) -> usize {
        self.json
            .as_ref()
            .and_then(|v| v["data"]["result"].as_array())
            .map_or(0, Vec::len)
    }

    /// At most `n` characters of the answer, for a report.
    fn short(&self, n: usize) -> String {
        let full = match &self.json {
            Some(v) => format!("{} {}", self.status, v["data"]["result"]),
            None => format!("{} {}", self.status, self.text),
        };
        full.chars().take(n).collect()
    }
}

async fn ask(base: &str, q: &str, step: &str) -> Answer {
    let a = client::try_get(
        &url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", q),
                ("start", &data::START_NS.to_string()),
                ("end", &data::END_NS.to_string()),
                ("step", step),
            ],
        ),
        &[],
    )
    .await
    .unwrap_or_else(|e| panic!("{q}: {e}"));
    let status = a.status.as_u16();
    let json = (status == 200).then(|| {
        let mut v: Value =
            serde_json::from_str(&a.body).unwrap_or_else(|e| panic!("{q}: {e}: {}", a.body));
        if let Some(d) = v["data"].as_object_mut() {
            d.remove("stats");
        }
        v
    });
    Answer {
        status,
        text: if json.is_some() {
            String::new()
        } else {
            a.body
        },
        json,
    }
}

/// The first difference between two answers' series, for a report.
fn first_difference(on: &Answer, off: &Answer) -> String {
    let (Some(a), Some(b)) = (&on.json, &off.json) else {
        return format!("on: {} | off: {}", on.short(300), off.short(300));
    };
    let empty = Vec::new();
    let ra = a["data"]["result"].as_array().unwrap_or(&empty);
    let rb = b["data"]["result"].as_array().unwrap_or(&empty);
    for s in ra {
        match rb.iter().find(|t| t["metric"] == s["metric"]) {
            None => return format!("series {} only with pushdown on", s["metric"]),
            Some(t) if t != s => {
                let (va, vb) = (&s["values"], &t["values"]);
                let pa = va.as_array().unwrap_or(&empty);
                let pb = vb.as_array().unwrap_or(&empty);
                let at = pa.iter().zip(pb).position(|(x, y)| x != y);
                return match at {
                    Some(i) => format!(
                        "series {}: point {} on {} off {} ({} vs {} points)",
                        s["metric"],
                        i,
                        pa[i],
                        pb[i],
                        pa.len(),
                        pb.len()
                    ),
                    None => format!(
                        "series {}: {} points on, {} off",
                        s["metric"],
                        pa.len(),
                        pb.len()
                    ),
                };
            }
            Some(_) => {}
        }
    }
    for t in rb {
        if !ra.iter().any(|s| s["metric"] == t["metric"]) {
            return format!("series {} only with pushdown off", t["metric"]);
        }
    }
    format!(
        "same series, other fields: on {} | off {}",
        a.to_string().chars().take(300).collect::<String>(),
        b.to_string().chars().take(300).collect::<String>()
    )
}

fn calls_text(calls: &[Call]) -> String {
    calls
        .iter()
        .map(|c| format!("\n      {} {}", c.path, c.logsql))
        .collect()
}

/// The path assertions on clean JSON or logfmt (`parser`); returns the
/// failures.
fn check_path(q: &str, parser: &str, path: Path, on: &[Call], off: &[Call]) -> Vec<String> {
    let mut out = Vec::new();
    let unpacks = on.iter().any(|c| c.unpacks(parser));
    let rows = on.iter().any(Call::is_row_query);
    let bad_on = match path {
        Path::Pushed => !unpacks || rows,
        Path::NoParser => unpacks || rows,
        Path::Proxy => !rows,
        Path::Either => false,
    };
    if bad_on {
        out.push(format!(
            "{q}: pushdown on, expected {path:?}, sent:{}",
            calls_text(on)
        ));
    }
    let bad_off = path == Path::Pushed
        && (off.iter().any(|c| c.unpacks(parser)) || !off.iter().any(Call::is_row_query));
    if bad_off {
        out.push(format!(
            "{q}: pushdown off, expected a row query and no unpack_{parser}, sent:{}",
            calls_text(off)
        ));
    }
    out
}

/// The fallback assertion: a stats query with `unpack_json`, then a row query.
fn check_fallback(q: &str, on: &[Call]) -> Option<String> {
    let stats = on
        .iter()
        .position(|c| c.unpacks("json") && !c.is_row_query());
    let falls_back = stats.is_some_and(|i| on[i + 1..].iter().any(Call::is_row_query));
    (!falls_back).then(|| {
        format!(
            "{q}: pushdown on, expected the guarded stats query then a row query, sent:{}",
            calls_text(on)
        )
    })
}

async fn start(tap: &OrderedTap, pushdown: bool) -> String {
    support::start_lokivl_with(&tap.url, |s| {
        s.parser_pushdown = pushdown;
        s.cache.max_bytes = 0;
        // As the binary runs by default.
        s.discovery = engine::discovery::loki_defaults();
    })
    .await
}

/// A VictoriaLogs holding [`data`], and two lokivl instances in front of
/// it, each behind its own tap: pushdown on, then off. `None` (the skip
/// said) without a VictoriaLogs binary.
async fn pair() -> Option<(VictoriaLogs, [(OrderedTap, String); 2])> {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary\n"),
        );
        return None;
    };
    let vl = VictoriaLogs::start(&bin).await;
    data::push(&vl).await;
    let (on_tap, off_tap) = (
        OrderedTap::start(&vl.url).await,
        OrderedTap::start(&vl.url).await,
    );
    let (on, off) = (start(&on_tap, true).await, start(&off_tap, false).await);
    Some((vl, [(on_tap, on), (off_tap, off)]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parser_pushdown_answers_as_the_proxy_path() {
    let Some((_vl, [(on_tap, on), (off_tap, off)])) = pair().await else {
        return;
    };
    // Whatever an instance learns once (the time-bucket rule) is not a
    // query's cost.
    for base in [&on, &off] {
        let warm = ask(base, r#"sum(count_over_time({kind="warm-up"}[5m]))"#, "60").await;
        assert_eq!(warm.status, 200, "{}", warm.text);
    }

    let started = std::time::Instant::now();
    let (mut compared, mut answered, mut errors) = (0usize, 0usize, 0usize);
    let mut mismatches: Vec<String> = Vec::new();
    let mut path_failures: Vec<String> = Vec::new();
    let mut fallbacks_checked = 0usize;
    let mut per_selector: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut error_kinds: std::collections::BTreeMap<String, usize> = Default::default();
    let templates: Vec<(String, Path)> = QUERIES
        .iter()
        .flat_map(|&(t, p)| [Some((t.to_owned(), p)), tolerant(t, p)])
        .flatten()
        .collect();
    let json_only: Vec<(String, Path)> =
        JSON_ONLY.iter().map(|&(t, p)| (t.to_owned(), p)).collect();
    let cluster = std::env::var_os("LOKIVL_VL_CLUSTER").is_some();
    for sel in data::selectors() {
        // logfmt on the logfmt streams, the clean JSON and the mixes.
        let logfmt = !sel.contains("kind=\"") || sel.contains("logfmt") || sel == CLEAN_RAW;
        for parser in ["json", "logfmt"] {
            if parser == "logfmt" && !logfmt {
                continue;
            }
            let only: &[(String, Path)] = if parser == "json" { &json_only } else { &[] };
            for (template, path) in templates.iter().chain(only) {
                let (template, path) = (template.as_str(), *path);
                let q = fill(template, &sel, parser);
                // The 5-minute step (windows of one bucket) on the streams
                // where values differ most, and not again on the cluster
                // run: every pair costs both instances a query.
                let wide = !cluster
                    && [CLEAN_RAW, CLEAN_LOGFMT, NUMERIC_RAW, NOTJSON_RAW].contains(&sel.as_str());
                let steps: &[&str] = if wide { &["60", "300"] } else { &["60"] };
                for &step in steps {
                    // Both at once: each tap logs only its own instance.
                    let (mark_on, mark_off) = (on_tap.len(), off_tap.len());
                    let (a_on, a_off) = tokio::join!(ask(&on, &q, step), ask(&off, &q, step));
                    let (calls_on, calls_off) = (on_tap.since(mark_on), off_tap.since(mark_off));
                    compared += 1;
                    answered += usize::from(a_off.series() > 0);
                    let tally = per_selector.entry(sel.clone()).or_default();
                    tally.0 += usize::from(a_off.series() > 0);
                    tally.1 += 1;
                    if a_off.status != 200 {
                        errors += 1;
                        let text: String = a_off.text.chars().take(90).collect();
                        *error_kinds
                            .entry(format!("{parser} {template}: {} {text}", a_off.status))
                            .or_default() += 1;
                    }
                    if a_on != a_off {
                        let m = format!(
                            "step {step}s {q}\n    {}\n    on:  {}\n    off: {}",
                            first_difference(&a_on, &a_off),
                            a_on.short(240),
                            a_off.short(240)
                        );
                        println!("MISMATCH {m}");
                        mismatches.push(m);
                    }
                    if step != "60" {
                        continue;
                    }
                    if (parser == "json" && sel == CLEAN_RAW)
                        || (parser == "logfmt" && sel == CLEAN_LOGFMT)
                    {
                        path_failures.extend(check_path(&q, parser, path, &calls_on, &calls_off));
                    }
                    if parser != "json" {
                        continue;
                    }
                    let fallback = FALLBACKS.iter().any(|(kind, t)| {
                        *t == template && sel == format!(r#"{{kind="{kind}", shape="raw"}}"#)
                    });
                    if fallback {
                        fallbacks_checked += 1;
                        path_failures.extend(check_fallback(&q, &calls_on));
                    }
                }
            }
        }
    }
    println!(
        "{compared} query pairs in {:?}: {answered} with series, {errors} errors, {} mismatches, {} path failures",
        started.elapsed(),
        mismatches.len(),
        path_failures.len()
    );
    for (sel, (n, of)) in &per_selector {
        println!("{sel}: {n} of {of} answers hold series");
    }
    for (kind, n) in &error_kinds {
        println!("{n:4} errors: {kind}");
    }
    for f in &path_failures {
        println!("PATH {f}");
    }
    // Not vacuous: many queries find data, on every selector, and every
    // fallback case ran.
    assert!(answered * 3 > compared, "{answered} of {compared} answered");
    for (sel, (n, _)) in &per_selector {
        assert!(*n > 0, "no answer holds a series on {sel}");
    }
    assert_eq!(fallbacks_checked, FALLBACKS.len());
    assert!(
        mismatches.is_empty() && path_failures.is_empty(),
        "{} answers differ between --parser-pushdown true and false:\n{}\n{} path failures:\n{}",
        mismatches.len(),
        mismatches.join("\n"),
        path_failures.len(),
        path_failures.join("\n")
    );
}

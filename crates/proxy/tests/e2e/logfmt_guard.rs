//! The parser pushdown's logfmt guard (`logsql_ast::logfmt_suspect`) against
//! a real VictoriaLogs: on every row it does not flag, the values
//! VictoriaLogs' `unpack_logfmt` gives the needed labels are the ones Loki's
//! logfmt parser gives them (lokivl's own, `engine::pipeline::logfmt`,
//! differential-tested against Loki 3.7), and it flags no clean line.
//!
//! The lines are adversarial for each difference between the two tokenizers
//! (repeated, bare and empty keys, keys Loki sanitizes onto a name, quotes,
//! escapes, separators, U+FFFD), written for every key of the needed-label
//! sets, plus clean lines in the shapes real logfmt has. The test also checks
//! that it has teeth: without the guard, rows do differ.
//!
//! Needs `LOKIVL_VL_BIN` (skips with one line without it); also runs against
//! VictoriaLogs v1.26 when `LOKIVL_VL_BIN_V126` names such a binary (a local
//! build, never committed), as a single node only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use engine::pipeline::hints::{Hints, MetricGrouping};
use engine::pipeline::labels::LabelsBuilder;
use engine::pipeline::logfmt::LogfmtParser;
use logsql_ast::{Filter, PARSED_PREFIX, logfmt_suspect};

use crate::support::backend::{self, VictoriaLogs};
use crate::support::client;

const SEC: i64 = 1_000_000_000;
/// 2026-01-01T00:00:00Z.
const BASE_NS: i64 = 1_767_225_600 * SEC;
/// The stream of the lines; a second stream also stores `level`.
const APP: &str = "logfmt-guard";
/// The guard's output field.
const GUARD: &str = "__lokivl_g";
/// The keys the adversarial lines are written for: every name of [`SETS`].
const KEYS: [&str; 5] = ["level", "duration_ms", "status", "msg", "trace_id"];
/// The needed-label sets checked.
const SETS: [&[&str]; 6] = [
    &["level"],
    &["duration_ms"],
    &["level", "status"],
    &["msg"],
    &["trace_id", "duration_ms"],
    &["status", "msg", "level"],
];

/// Lines that break one of the tokenizers' agreements, `K` standing for the
/// key under test.
const ADVERSARIAL: &[&str] = &[
    // Repeated, bare and empty keys: Loki keeps the first non-empty value.
    "K=a K=b",
    "K= K=b",
    "K K=b",
    "K=a K=",
    "K=\"\" K=b",
    "x=1 K=a y=2 K=b",
    "K=a x=\"K=b\"",
    // `=` and `"` in unquoted values: Loki drops the pair.
    "K=a=b",
    "K==b",
    "K=a\"b",
    "K=a\"",
    "x=y=z K=a",
    "x=a\"b K=c",
    // Quoted values.
    "K=\"a b\" x=1",
    "K=\"a=b\" x=1",
    "K=\"\"",
    "K=\" a\" x=1",
    "K=\"a b\"c x=1",
    "K=\"unterminated x=1",
    "K=\"",
    "x=\"a b\"K=glued",
    "x=\"a b\" y=\"c d\" K=e",
    "x=\"a b\" y=\"c d\"K=e",
    "x=\"a\" y=\"b\" z=\"c K=bad",
    "x=\"a\" y=\"c K=bad",
    "x=\"a y=\"z K=bad w\"",
    "x=\"a=\" K=b",
    "x=\"a=\"K=b",
    "x=\"\" K=c",
    "x=\"\"K=c",
    "x=\" a\" K=c",
    "x=\"a K=b\"",
    "msg=\"unterminated K=bad",
    "a\"b=\"c K=bad d\" K=good",
    "\"a=\"x K=bad y\" K=good",
    " =\"x K=bad y\" K=good",
    "=\"x K=bad y\" K=good",
    // The same with one `K`, so that no repeated-key term hides them.
    " =\"x K=bad y\"",
    "=\"x K=bad y\"",
    "a\"b=\"c K=bad d\"",
    "\"a=\"x K=bad y\"",
    "x\"y a=\" K=bad",
    "x=\"a\" b\"c=\"K=bad d\" K=good",
    "x=\"a\" \"b c\" K=d",
    // Escapes: JSON-like in Loki, Go in VictoriaLogs.
    "K=\"a\\\"b\" x=1",
    "K=\"a\\'b\" x=1",
    "K=\"a\\x41b\" x=1",
    "K=\"a\\/b\" x=1",
    "K=\"a\\u00e9b\" x=1",
    "K=\"a\\tb\" x=1",
    "x=\"a\\\" K=bad\" K=good",
    "x=\\ K=a",
    "K=a\\b",
    // Single and back quotes: VictoriaLogs unquotes them.
    "K='a b' x=1",
    "K=`a b` x=1",
    "x='a K=bad b' K=good",
    "x=`a K=bad b` K=good",
    "K='a'",
    // Separators: Loki splits on every control character.
    "x=1\tK=a",
    "x=1\tK=a K=b",
    "K=a\tx=1",
    "\tK=a",
    "K=\"a\tb\"",
    "K=\"a\nb\" x=1",
    "x=\"a\nK=bad\" K=good",
    "x=1\nK=a",
    "x=1\u{b}K=a",
    "x=1\u{1f}K=a",
    "x=1\rK=a",
    "K=a\u{7f} x=1",
    "K=a  x=1",
    "   K=a   ",
    // U+FFFD: Loki blanks it in values and refuses keys holding it.
    "K=a\u{FFFD}b",
    "K=\"a\u{FFFD}b\"",
    "x\u{FFFD}=\"a K=bad b\" K=good",
    "x\u{FFFD}y K=a",
    // Unicode spaces: both trim them around keys, neither splits on them.
    "\u{a0}K=a",
    "K\u{a0}=a",
    "x=1 \u{a0}K=a K=b",
    "K\u{a0}=a K=b",
    "K\u{3000}=a K",
    // The name as a word before or after its key, in a message.
    "msg=\"K done\" K=a",
    "K=a msg=\"K done\"",
    "K=a msg=\"done K\"",
    "K=a x=K-1 y=a.K",
    "K=a x=a-K y=a-K",
    "K=a x=a-K",
    "K=a x=1 K",
    "K=a x=1 K y=2",
    "K=a K=a",
    "K=a\u{a0}b x=1",
    "K=a\u{2003}x=1",
    // Keys that are prefixes, suffixes or neighbours of the name.
    "xK=a K=b",
    "K_x=a",
    "log.K=a K=b",
    "Kx=1",
    "K-x=1 K=a",
    "_K=1",
    "K=é x=ü",
    "ké=1 K=2",
    "K",
    "K=",
    "=",
    "==",
    "\"",
    "=\"",
];

/// Keys Loki sanitizes onto a name with `_`, written with `A` and `B` for
/// its two halves.
const ALIASES: &[&str] = &[
    "A.B=5",
    "A-B=5",
    "AÄB=5",
    "A\u{a0}B=5",
    "A/B=5 A_B=6",
    "A_B=6 A.B=5",
    "A.B=5 A_B=6",
    "\u{a0}A.B=5",
];

/// Clean lines in the shapes of real logfmt; the guard must flag none.
fn clean_lines() -> Vec<String> {
    let levels = ["info", "warn", "error", "debug"];
    let statuses = ["200", "404", "500", "authorized"];
    let mut out = Vec::new();
    for i in 0..60 {
        let level = levels[i % 4];
        let status = statuses[i % 4];
        out.push(format!(
            "level={level} ts=2026-01-01T00:00:{:02}Z msg=\"job completed\" job=etl duration_ms={} trace_id=abc{i}",
            i % 60,
            500 + i * 7
        ));
        out.push(format!(
            "level={level} ts=2026-01-01T00:00:00.{i:03}Z caller=main.go:42 msg=\"request served\" status={status} duration_ms={i} path=/api/v1/items/{i} err=\"\" trace_id=t{i}"
        ));
        out.push(format!(
            "ts=2026-01-01T00:00:00Z level={level} msg=\"payment processed\" err=\"card declined: insufficient funds\" status={status} duration_ms=1{i} user=usr_{i}"
        ));
        out.push(format!(
            "level={level} msg=done status={status} duration_ms={i} trace_id=x-{i}-y"
        ));
        // Names as words in values.
        out.push(format!(
            "level={level} status={status} service=level-status duration_ms={i} host=x-level trace_id=a-trace_id"
        ));
        // Names as words in a message before their keys.
        out.push(format!(
            "msg=\"status and level changed, duration_ms logged\" level={level} status={status} duration_ms={i}"
        ));
    }
    out
}

/// The truth: Loki's logfmt parser with the hints of a query needing
/// `names`, over a line of a stream with labels `stream`.
fn loki_values(line: &str, stream: &[(&str, &str)], names: &[String]) -> Vec<String> {
    let hints = Hints::for_metric(&[], &[], MetricGrouping::By(names), None).expect("hints");
    let mut lbs = LabelsBuilder::new();
    lbs.reset(stream.iter().copied());
    let mut parser = LogfmtParser::new(false, false, Vec::new());
    assert!(parser.process(line, &mut lbs, &hints), "no hint filter");
    names
        .iter()
        .map(|n| lbs.get(n).unwrap_or("").to_owned())
        .collect()
}

/// Every line pushed, with its stream labels.
fn dataset() -> Vec<(Vec<(&'static str, &'static str)>, String)> {
    let plain = vec![("app", APP)];
    let mut lines: Vec<String> = Vec::new();
    for k in KEYS {
        lines.extend(ADVERSARIAL.iter().map(|t| t.replace('K', k)));
        if let Some((a, b)) = k.split_once('_') {
            lines.extend(ALIASES.iter().map(|t| t.replace('A', a).replace('B', b)));
        }
    }
    let mut out: Vec<_> = lines.into_iter().map(|l| (plain.clone(), l)).collect();
    out.extend(clean_lines().into_iter().map(|l| (plain.clone(), l)));
    // A stored `level` wins over the parsed one in both.
    let stored = vec![("app", APP), ("level", "stored")];
    for l in ["level=parsed status=1", "level=\"a b\" level=c", "status=2"] {
        out.push((stored.clone(), l.to_owned()));
    }
    out
}

fn push_body(data: &[(Vec<(&str, &str)>, String)]) -> String {
    let mut streams: BTreeMap<String, (serde_json::Value, Vec<serde_json::Value>)> =
        BTreeMap::new();
    for (i, (labels, line)) in data.iter().enumerate() {
        let key = format!("{labels:?}");
        let entry = streams.entry(key).or_insert_with(|| {
            let m: serde_json::Map<String, serde_json::Value> = labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), serde_json::json!(v)))
                .collect();
            (serde_json::Value::Object(m), Vec::new())
        });
        let t = BASE_NS + i64::try_from(i).unwrap() * SEC / 1000;
        entry.1.push(serde_json::json!([t.to_string(), line]));
    }
    let streams: Vec<_> = streams
        .into_values()
        .map(|(stream, values)| serde_json::json!({"stream": stream, "values": values}))
        .collect();
    serde_json::json!({ "streams": streams }).to_string()
}

/// How the pushdown unpacks.
#[derive(Debug, Clone, Copy)]
enum Unpack {
    /// `unpack_logfmt fields (…) result_prefix P`, as the pushdown plans it.
    Plain,
    /// The same with `keep_original_fields`, which changes nothing for these
    /// prefixed names but makes VictoriaLogs v1.26 read the stored fields the
    /// later `format … keep_original_fields` needs: its needed-fields pass
    /// ignores `result_prefix` and drops a stored `level` when
    /// `fields (level)` is unpacked (v1.51 does not).
    KeepOriginal,
}

/// The pushdown's pipe for `names`, then `guard`, then the fields read.
fn pushdown_query(names: &[String], unpack: Unpack, guard: &Filter) -> String {
    let list = names.join(", ");
    let keep = match unpack {
        Unpack::Plain => "",
        Unpack::KeepOriginal => " keep_original_fields",
    };
    let mut q = format!(
        "{{app=\"{APP}\"}} | unpack_logfmt fields ({list}) result_prefix \"{PARSED_PREFIX}\"{keep}"
    );
    for n in names {
        q.push_str(&format!(
            " | format \"<{PARSED_PREFIX}{n}>\" as \"{n}\" keep_original_fields"
        ));
    }
    q.push_str(&format!(" | format if ({guard}) \"1\" as \"{GUARD}\""));
    q.push_str(&format!(" | fields _stream, _msg, {GUARD}, {list}"));
    q
}

async fn rows(vl: &str, q: &str) -> Vec<serde_json::Value> {
    let (status, _, body) = client::try_post(
        &format!("{vl}/select/logsql/query"),
        "application/x-www-form-urlencoded",
        client::qs(&[
            ("query", q),
            ("start", &(BASE_NS - 3600 * SEC).to_string()),
            ("end", &(BASE_NS + 3600 * SEC).to_string()),
        ])
        .into_bytes(),
    )
    .await
    .map(client::Answer::parts)
    .expect("query VictoriaLogs");
    assert_eq!(status, 200, "{q}: {body}");
    body.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn field(row: &serde_json::Value, name: &str) -> String {
    row.get(name)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// What one guard showed for one needed-label set.
#[derive(Debug, Default)]
struct Tally {
    rows: usize,
    flagged: usize,
    /// Rows whose values differ from Loki's (all must be flagged).
    differing: usize,
    /// Differing rows the guard let through.
    missed: Vec<String>,
    /// Clean lines the guard flagged.
    clean_flagged: Vec<String>,
}

/// Runs the pushdown with `guard` for `names` and compares every row with
/// Loki's values.
async fn evaluate(
    vl: &str,
    data: &[(Vec<(&str, &str)>, String)],
    names: &[String],
    unpack: Unpack,
    guard: &Filter,
) -> Tally {
    let clean = clean_lines();
    let q = pushdown_query(names, unpack, guard);
    let got = rows(vl, &q).await;
    assert_eq!(got.len(), data.len(), "{q}");
    let mut tally = Tally {
        rows: got.len(),
        ..Tally::default()
    };
    for row in &got {
        let line = field(row, "_msg");
        let flagged = field(row, GUARD) == "1";
        let stream: &[(&str, &str)] = if field(row, "_stream").contains("level=\"stored\"") {
            &[("app", APP), ("level", "stored")]
        } else {
            &[("app", APP)]
        };
        let want = loki_values(&line, stream, names);
        let have: Vec<String> = names.iter().map(|n| field(row, n)).collect();
        if want != have {
            tally.differing += 1;
            if !flagged {
                tally
                    .missed
                    .push(format!("{line:?}: VictoriaLogs {have:?}, Loki {want:?}"));
            }
        }
        if flagged {
            tally.flagged += 1;
            if clean.contains(&line) {
                tally.clean_flagged.push(line);
            }
        }
    }
    tally
}

fn names_of(set: &[&str]) -> Vec<String> {
    set.iter().map(|n| (*n).to_owned()).collect()
}

/// The guard with one disjunct left out, for every disjunct outside a `!`
/// (labelled with the disjunct left out).
fn without_one_disjunct(f: &Filter) -> Vec<(String, Filter)> {
    let mut out = Vec::new();
    match f {
        Filter::Or(items) => {
            for (i, item) in items.iter().enumerate() {
                let mut rest = items.clone();
                rest.remove(i);
                out.push((item.to_string(), Filter::or(rest)));
                for (label, v) in without_one_disjunct(item) {
                    let mut with = items.clone();
                    with[i] = v;
                    out.push((label, Filter::Or(with)));
                }
            }
        }
        Filter::And(items) => {
            for (i, item) in items.iter().enumerate() {
                for (label, v) in without_one_disjunct(item) {
                    let mut with = items.clone();
                    with[i] = v;
                    out.push((label, Filter::And(with)));
                }
            }
        }
        _ => {}
    }
    out
}

async fn run_against(bin: &Path, unpacks: &[Unpack]) {
    let data = dataset();
    let vl = VictoriaLogs::start(bin).await;
    vl.ingest(push_body(&data)).await;
    for &unpack in unpacks {
        for set in SETS {
            let names = names_of(set);
            let t = evaluate(
                &vl.url,
                &data,
                &names,
                unpack,
                &logfmt_suspect(&names, PARSED_PREFIX),
            )
            .await;
            println!(
                "{}: {unpack:?} {set:?}: {} rows, {} flagged, {} differing from Loki",
                bin.display(),
                t.rows,
                t.flagged,
                t.differing
            );
            assert!(
                t.missed.is_empty(),
                "{set:?}: rows the guard lets through with other values than Loki's:\n{}",
                t.missed.join("\n")
            );
            assert!(
                t.clean_flagged.is_empty(),
                "{set:?}: clean lines flagged:\n{}",
                t.clean_flagged.join("\n")
            );
            // The lines must exercise the differences the guard is for.
            assert!(t.differing >= 20, "{set:?}: too few differing rows: {t:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unflagged_rows_parse_as_in_loki() {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)\n"),
        );
        return;
    };
    run_against(&bin, &[Unpack::Plain, Unpack::KeepOriginal]).await;
    if let Some(old) = vl126() {
        run_against(&old, &[Unpack::KeepOriginal]).await;
    }
}

/// Every disjunct of the guard is needed: left out, some adversarial row of
/// some needed-label set gets through with a value other than Loki's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_disjunct_of_the_guard_catches_a_row() {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)\n"),
        );
        return;
    };
    let data = dataset();
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body(&data)).await;
    let mut needed: BTreeMap<String, usize> = BTreeMap::new();
    for set in SETS {
        let names = names_of(set);
        let guard = logfmt_suspect(&names, PARSED_PREFIX);
        for (label, weaker) in without_one_disjunct(&guard) {
            // Names differ between sets; count by the term's shape.
            let shape = names.iter().fold(label, |l, n| {
                l.replace(&format!("\"{n}\""), "\"<n>\"").replace(
                    &format!("{PARSED_PREFIX}{n}\""),
                    &format!("{PARSED_PREFIX}<n>\""),
                )
            });
            let t = evaluate(&vl.url, &data, &names, Unpack::Plain, &weaker).await;
            *needed.entry(shape).or_default() += t.missed.len();
        }
    }
    let unneeded: Vec<&String> = needed
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(l, _)| l)
        .collect();
    for (l, n) in &needed {
        println!("{n:4} rows missed without {l}");
    }
    assert!(unneeded.is_empty(), "disjuncts no row needs: {unneeded:#?}");
}

/// A v1.26 binary from `LOKIVL_VL_BIN_V126`; not on the cluster run
/// (`LOKIVL_VL_CLUSTER`), whose front v1.26 cannot flush.
fn vl126() -> Option<PathBuf> {
    if std::env::var_os("LOKIVL_VL_CLUSTER").is_some() {
        return None;
    }
    let p = PathBuf::from(std::env::var_os("LOKIVL_VL_BIN_V126")?);
    p.is_file().then_some(p)
}

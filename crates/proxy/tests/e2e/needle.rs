//! Needle search against a real VictoriaLogs: `|= "…"` line filters, alone
//! and as `or` alternatives, keep exactly the lines that contain a needle,
//! on lines where the needle's tokens sit inside longer tokens, at the start
//! or end of a line, next to Unicode letters, and on near misses. Each answer
//! of lokivl is checked against the lines computed here and against the
//! one-alternation regex lokivl sent before `or` filters were split, asked of
//! VictoriaLogs directly. Two premises of the lowering are checked on the
//! real server too: a phrase of a needle's interior tokens never drops a
//! line that contains the needle (so such a phrase is an exact prefilter),
//! and VictoriaLogs reads fewer value bytes for an `or` of literal regexes
//! than for the same alternation in one regex (its Bloom filters skip the
//! blocks without the tokens). See `docs/compatibility.md`, "Line filters
//! and VictoriaLogs' Bloom filters".

use crate::support;

use std::collections::BTreeSet;

use crate::support::backend::{self, VictoriaLogs};
use crate::support::client::{self, url};
use serde_json::Value;

/// 2026-08-22T10:00:00Z.
const BASE_S: i64 = 1_787_392_800;

const N1: &str = "id=a-b1-c";
const N2: &str = "x—შეცდომა—y";
const N3: &str = "requestId=550e8400-e29b-41d4-a716-446655440000";

/// Each needle with the phrase of its interior tokens.
const PHRASES: [(&str, &str); 3] = [
    (N1, "a-b1"),
    (N2, "შეცდომა"),
    (N3, "550e8400-e29b-41d4-a716"),
];

/// Lines of the stream that holds the needles: hits and near misses.
const LINES: &[&str] = &[
    "id=a-b1-c",
    "uid=a-b1-cc trailing",
    "start id=a-b1-c",
    "ბid=a-b1-cდ",
    "éid=a-b1-c9 ü",
    "id=a-b1c",
    "id=a-b12-c",
    "id=a-B1-c",
    "id=ab1-c",
    "x—შეცდომა—y",
    "ax—შეცდომა—yb",
    "x—შეცდომაა—y",
    "x-შეცდომა-y",
    "GET requestId=550e8400-e29b-41d4-a716-446655440000 200",
    "xrequestId=550e8400-e29b-41d4-a716-4466554400001",
    "requestId=550e8400-e29b-41d4-a716-44665544000",
    "requestId=550e8400-e29b-41d4-a716",
    "550e8400-e29b-41d4-a716-446655440000",
];

/// Noise in other streams: none contains a needle, some share its tokens.
fn noise(stream: usize, i: usize) -> String {
    match i % 4 {
        0 => format!("level=info stream={stream} n={i} msg=\"GET /api/v1/users 200\""),
        1 => format!("id=a-b{i}x-c requestId={i:08x}-e29b-41d4-a716-{i:012}"),
        2 => format!("x—შეცდომა{i}—y trace_id={i:032x}"),
        _ => format!("a b2 c {i} შეცდომაX"),
    }
}

fn skip() -> bool {
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("skipped: no VictoriaLogs binary\n"),
    );
    true
}

/// Go `regexp.QuoteMeta`, as lokivl quotes a `|=` literal.
fn quote_meta(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A LogsQL double-quoted string.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The lines of all streams whose text contains any of `needles`.
fn expected(all: &[String], needles: &[&str]) -> BTreeSet<String> {
    all.iter()
        .filter(|l| needles.iter().any(|n| l.contains(n)))
        .cloned()
        .collect()
}

/// The `_msg` of every row VictoriaLogs returns for `filter` over the data.
async fn vl_lines(vl: &str, filter: &str) -> BTreeSet<String> {
    let body = vl_query(vl, &format!(r#"{{app=~"needle-.*"}} {filter}"#)).await;
    body.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["_msg"].as_str().unwrap().to_owned()
        })
        .collect()
}

async fn vl_query(vl: &str, q: &str) -> String {
    let (st, _, body) = client::try_post(
        &format!("{vl}/select/logsql/query"),
        "application/x-www-form-urlencoded",
        client::qs(&[
            ("query", q),
            ("start", &(BASE_S * 1_000_000_000).to_string()),
            ("end", &((BASE_S + 3600) * 1_000_000_000).to_string()),
        ])
        .into_bytes(),
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{q}: {body}");
    body
}

/// `BytesReadValues` of `| query_stats` for `filter`.
async fn values_read(vl: &str, filter: &str) -> u64 {
    let body = vl_query(
        vl,
        &format!(r#"{{app=~"needle-.*"}} {filter} | query_stats"#),
    )
    .await;
    let v: Value = serde_json::from_str(body.trim()).unwrap();
    v["BytesReadValues"].as_str().unwrap().parse().unwrap()
}

/// The lines lokivl answers for the LogQL log query `q`.
async fn lokivl_lines(base: &str, q: &str) -> BTreeSet<String> {
    let (st, _, body) = client::try_get(
        &url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", q),
                ("start", &(BASE_S * 1_000_000_000).to_string()),
                ("end", &((BASE_S + 3600) * 1_000_000_000).to_string()),
                ("limit", "5000"),
                ("direction", "forward"),
            ],
        ),
        &[],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{q}: {body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let mut out = BTreeSet::new();
    for stream in v["data"]["result"].as_array().unwrap() {
        for e in stream["values"].as_array().unwrap() {
            out.insert(e[1].as_str().unwrap().to_owned());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn needles_keep_exactly_the_lines_that_contain_them() {
    let Some(bin) = backend::find_vl_binary() else {
        skip();
        return;
    };
    let vl = VictoriaLogs::start(&bin).await;
    let t0 = BASE_S * 1_000_000_000;
    let mut all: Vec<String> = Vec::new();
    let hits: Vec<(i64, String)> = LINES
        .iter()
        .enumerate()
        .map(|(i, l)| (t0 + i as i64 * 1_000_000, (*l).to_owned()))
        .collect();
    all.extend(hits.iter().map(|(_, l)| l.clone()));
    vl.push_lines("needle-a", &hits).await;
    for s in 1..4 {
        let lines: Vec<(i64, String)> = (0..3000)
            .map(|i| (t0 + i as i64 * 1_000_000, noise(s, i)))
            .collect();
        all.extend(lines.iter().map(|(_, l)| l.clone()));
        vl.push_lines(&format!("needle-{s}"), &lines).await;
    }
    let lokivl = support::start_lokivl(&vl.url).await;

    let cases: [(&str, &[&str]); 6] = [
        (r#"|= "id=a-b1-c""#, &[N1]),
        (
            r#"|= "requestId=550e8400-e29b-41d4-a716-446655440000""#,
            &[N3],
        ),
        (r#"|= "id=a-b1-c" or "x—შეცდომა—y""#, &[N1, N2]),
        (
            r#"|= `id=a-b1-c` or "x—შეცდომა—y" or "requestId=550e8400-e29b-41d4-a716-446655440000""#,
            &[N1, N2, N3],
        ),
        (r#"|~ "id=a-b1-c" or "x—შეცდომა—y""#, &[N1, N2]),
        (r#"|~ "id=a-b1-c|x—შეცდომა—y""#, &[N1, N2]),
    ];
    for (filter, needles) in cases {
        let want = expected(&all, needles);
        assert!(!want.is_empty(), "{filter}: no line holds the needle");
        let got = lokivl_lines(&lokivl, &format!(r#"{{app=~"needle-.*"}} {filter}"#)).await;
        assert_eq!(got, want, "lokivl {filter}");
        // The regex lokivl sent before splitting `or` alternatives.
        let alternation = needles
            .iter()
            .map(|n| format!("(?:{})", quote_meta(n)))
            .collect::<Vec<_>>()
            .join("|");
        let direct = vl_lines(&vl.url, &format!("_msg:~{}", quoted(&alternation))).await;
        assert_eq!(direct, want, "VictoriaLogs _msg:~{alternation:?}");
    }

    // A phrase of the needle's interior tokens keeps every line holding the needle.
    for (needle, phrase) in PHRASES {
        let regex = format!("_msg:~{}", quoted(&quote_meta(needle)));
        let exact = vl_lines(&vl.url, &regex).await;
        assert_eq!(exact, expected(&all, &[needle]), "{regex}");
        let pruned = vl_lines(&vl.url, &format!("_msg:{} {regex}", quoted(phrase))).await;
        assert_eq!(
            pruned, exact,
            "phrase {phrase:?} as a prefilter of {needle:?}"
        );
    }

    // VictoriaLogs skips the noise streams' blocks for literal regexes, not
    // for one alternation.
    let split = format!(
        "(_msg:~{} or _msg:~{})",
        quoted(&quote_meta(N1)),
        quoted(&quote_meta(N2))
    );
    let joined = format!(
        "_msg:~{}",
        quoted(&format!("(?:{})|(?:{})", quote_meta(N1), quote_meta(N2)))
    );
    let (split_read, joined_read) = (
        values_read(&vl.url, &split).await,
        values_read(&vl.url, &joined).await,
    );
    assert!(
        split_read * 4 < joined_read,
        "values bytes read: split {split_read}, one alternation {joined_read}"
    );
}

//! `/loki/api/v1/format_query` golden data: what a real Loki answered for the
//! corpus queries (and a few extra printing edge cases), and a check that
//! lokivl prints and rejects exactly the same way.
//!
//! `tests/data/format_query.golden.jsonl` is written only by
//! [`record_from_real_loki`]; never edit it by hand. To re-record:
//!
//! ```text
//! LOKIVL_LOKI_BIN=/opt/loki/loki LOKIVL_RECORD_GOLDEN=1 \
//!     cargo test -p logql-parser --test format_query -- --nocapture
//! ```
//!
//! Without `LOKIVL_RECORD_GOLDEN=1` the recorder only compares the live Loki
//! with the stored golden (to notice a changed Loki).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use logql_parser::{parse, prettify};

/// One recorded answer of Loki's format_query.
#[derive(serde::Serialize, serde::Deserialize)]
struct Row {
    query: String,
    status: u16,
    /// The response body exactly as Loki sent it.
    body: String,
}

/// The decoded JSON body.
#[derive(serde::Deserialize)]
struct Body {
    status: String,
    data: Option<String>,
    error: Option<String>,
}

/// Queries where lokivl knowingly differs from the Loki binary, with the reason.
const KNOWN_MISMATCHES: &[(&str, &str)] = &[
    (
        r#"{app="foo"} | logfmt | status_code > 0x10"#,
        "Loki v3.7.8 accepts `0x10` and prints `status_code>0`, but its parser test \
         (the corpus verdict, which lokivl follows) expects the ParseFloat error; \
         printing a different number than the user wrote would change the query",
    ),
    (
        r#"{app="a"} | logfmt | x > 10 | unwrap y"#,
        "same rejection, different position: Loki's LALR parser stops at `unwrap` \
         (col 31), lokivl's farthest-token heuristic reports the label after it",
    ),
];

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn golden_path() -> PathBuf {
    crate_dir().join("tests/data/format_query.golden.jsonl")
}

fn load_golden() -> Vec<Row> {
    let text = std::fs::read_to_string(golden_path()).expect("golden file is committed");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("golden line is JSON"))
        .collect()
}

/// What lokivl answers for `query`, as (HTTP status, data or error text).
fn ours(query: &str) -> (u16, String) {
    match parse(query) {
        Ok(e) => (200, prettify(&e)),
        Err(e) => (400, e.to_string()),
    }
}

#[test]
fn printer_matches_recorded_loki() {
    let rows = load_golden();
    assert!(rows.len() > 400, "golden has {} rows", rows.len());
    let (mut ok, mut known, mut failures) = (0usize, 0usize, Vec::new());
    for row in &rows {
        let body: Body = serde_json::from_str(&row.body).expect("Loki body is JSON");
        let want = match row.status {
            200 => {
                assert_eq!(body.status, "success");
                body.data.unwrap_or_default()
            }
            _ => {
                assert_eq!(body.status, "invalid-query");
                body.error.unwrap_or_default()
            }
        };
        let got = ours(&row.query);
        let listed = KNOWN_MISMATCHES.iter().any(|(q, _)| *q == row.query);
        match (got == (row.status, want.clone()), listed) {
            (true, false) => ok += 1,
            (false, true) => known += 1,
            (true, true) => failures.push(format!(
                "listed as a known mismatch but now matches, unlist it: {:?}",
                row.query
            )),
            (false, false) => failures.push(format!(
                "query {:?}\n  loki  ({}): {want:?}\n  lokivl({}): {:?}",
                row.query, row.status, got.0, got.1
            )),
        }
    }
    println!(
        "format_query golden: {} rows, {ok} match, {known} known mismatches",
        rows.len()
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The queries to record: every corpus line plus the extra edge cases.
fn queries_to_record() -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Case {
        query: String,
    }
    let corpus = crate_dir().join("tests/data/logql-corpus.jsonl");
    let text = std::fs::read_to_string(&corpus)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", corpus.display()));
    let mut out: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Case>(l).expect("corpus JSON").query)
        .collect();
    let extra = std::fs::read_to_string(crate_dir().join("tests/data/format_query.extra.jsonl"))
        .expect("extra queries file");
    out.extend(
        extra
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<String>(l).expect("extra line is a JSON string")),
    );
    // Loki's own length limit (128 KiB), checked with a query of exactly that size.
    out.push(format!(
        "{{app=\"{}\"}}",
        "a".repeat(logql_parser::MAX_QUERY_LENGTH - 8)
    ));
    out
}

/// Loki config for a throwaway single-binary instance on loopback.
const LOKI_CONFIG: &str = r#"auth_enabled: false
server:
  http_listen_address: 127.0.0.1
  http_listen_port: __HTTP_PORT__
  grpc_listen_address: 127.0.0.1
  grpc_listen_port: __GRPC_PORT__
  log_level: warn
common:
  instance_addr: 127.0.0.1
  path_prefix: __DIR__
  storage:
    filesystem:
      chunks_directory: __DIR__/chunks
      rules_directory: __DIR__/rules
  replication_factor: 1
  ring:
    kvstore:
      store: inmemory
schema_config:
  configs:
    - from: 2020-10-24
      store: tsdb
      object_store: filesystem
      schema: v13
      index:
        prefix: index_
        period: 24h
limits_config:
  reject_old_samples: false
  max_query_length: 0
pattern_ingester:
  enabled: false
analytics:
  reporting_enabled: false
memberlist:
  join_members: []
"#;

/// Kills and reaps the Loki child however the test ends.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind an ephemeral port")
        .port()
}

/// A minimal HTTP/1.0 exchange (Loki then closes the connection and never chunks).
fn http(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok((status, rest.to_owned()))
}

#[test]
fn record_from_real_loki() {
    let Ok(bin) = std::env::var("LOKIVL_LOKI_BIN") else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no Loki binary (set LOKIVL_LOKI_BIN); format_query recorder\n"),
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("lokivl-fq-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (http_port, grpc_port) = (free_port(), free_port());
    let config = LOKI_CONFIG
        .replace("__DIR__", &dir.display().to_string())
        .replace("__HTTP_PORT__", &http_port.to_string())
        .replace("__GRPC_PORT__", &grpc_port.to_string());
    let config_path = dir.join("loki.yaml");
    std::fs::write(&config_path, config).expect("write config");
    let child = Command::new(&bin)
        .arg(format!("-config.file={}", config_path.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {bin}: {e}"));
    let _guard = KillOnDrop(child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !matches!(http(http_port, "GET", "/ready", ""), Ok((200, _))) {
        assert!(Instant::now() < deadline, "Loki did not become ready");
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut rows = Vec::new();
    for query in queries_to_record() {
        let form: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("query", &query)
            .finish();
        let (status, body) = http(http_port, "POST", "/loki/api/v1/format_query", &form)
            .unwrap_or_else(|e| panic!("format_query {query:?}: {e}"));
        assert!(status == 200 || status == 400, "{query:?}: HTTP {status}");
        rows.push(Row {
            query,
            status,
            body,
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    let text: String = rows
        .iter()
        .map(|r| serde_json::to_string(r).expect("row serializes") + "\n")
        .collect();
    if std::env::var("LOKIVL_RECORD_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(golden_path(), text).expect("write golden");
        println!(
            "recorded {} rows to {}",
            rows.len(),
            golden_path().display()
        );
    } else {
        let stored = std::fs::read_to_string(golden_path())
            .unwrap_or_else(|e| panic!("{}: {e}", golden_path().display()));
        assert!(
            stored == text,
            "the live Loki answers differently from the golden; re-record with LOKIVL_RECORD_GOLDEN=1"
        );
    }
}

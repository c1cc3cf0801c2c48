//! The lowering table (`tests/data/lowering.txt`): LogQL in, exact LogsQL out,
//! and, when `LOKIVL_VL_BIN` names a VictoriaLogs binary, the lines each
//! lowered query selects from a small dataset.
//!
//! Table format: blocks separated by blank lines; `#` starts a comment line.
//! `logql:` the query; `logsql:` the exact lowering or `error:` the exact
//! error text; `expect:` the ids of the dataset lines VictoriaLogs must return
//! (`-` for none). Blocks without `expect:` are only checked textually.
//! `proxy:` the stages the proxy evaluates after VictoriaLogs, printed as
//! LogQL; absent means none (VictoriaLogs computes the whole query).

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use logql_parser::Expr;

struct Case {
    line: usize,
    logql: String,
    logsql: Option<String>,
    error: Option<String>,
    proxy: String,
    expect: Option<BTreeSet<String>>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/lowering.txt");
    let mut out = Vec::new();
    let mut cur: Option<Case> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if line.is_empty() {
            out.extend(cur.take());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(": ")
            .unwrap_or((line.trim_end_matches(':'), ""));
        let case = cur.get_or_insert_with(|| Case {
            line: i + 1,
            logql: String::new(),
            logsql: None,
            error: None,
            proxy: String::new(),
            expect: None,
        });
        match key {
            "logql" => case.logql = value.to_owned(),
            "logsql" => case.logsql = Some(value.to_owned()),
            "error" => case.error = Some(value.to_owned()),
            "proxy" => case.proxy = value.to_owned(),
            "expect" => {
                case.expect = Some(
                    value
                        .split_whitespace()
                        .filter(|s| *s != "-")
                        .map(str::to_owned)
                        .collect(),
                )
            }
            other => panic!("lowering.txt:{}: unknown key {other:?}", i + 1),
        }
    }
    out.extend(cur);
    out
}

/// Whether `logql_parser::parse` is implemented yet (it was a stub when this
/// table was written); the table needs it to turn LogQL text into ASTs.
fn lower(logql: &str) -> Result<logsql_ast::LogPlan, String> {
    match logql_parser::parse(logql) {
        Ok(Expr::Log(e)) => {
            logsql_ast::lower_log(&e, &logsql_ast::Discovery::default()).map_err(|e| e.to_string())
        }
        Ok(Expr::Metric(_)) => Err("metric query".into()),
        Err(e) => Err(format!("parse error: {e}")),
    }
}

fn proxy_text(plan: &logsql_ast::LogPlan) -> String {
    plan.proxy_stages
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn lowering_table() {
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() > 20, "table has {} cases", all.len());
    for c in &all {
        let got = lower(&c.logql);
        let ok = match (&got, &c.logsql, &c.error) {
            (Ok(plan), Some(want), None) => {
                plan.query.to_string() == *want && proxy_text(plan) == c.proxy
            }
            (Err(e), None, Some(want)) => e == want,
            _ => false,
        };
        if !ok {
            let got = match got {
                Ok(p) => format!("logsql: {}\n       proxy: {}", p.query, proxy_text(&p)),
                Err(e) => format!("error: {e}"),
            };
            failures.push(format!(
                "lowering.txt:{}: {}\n  got  {got}",
                c.line, c.logql
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---- VictoriaLogs check ----

/// Label pairs.
type Pairs = &'static [(&'static str, &'static str)];

/// (id, stream labels, line, structured metadata)
const DATASET: &[(&str, Pairs, &str, Pairs)] = &[
    (
        "j1",
        &[("app", "api"), ("env", "prod")],
        r#"{"level":"error","status":500,"msg":"[ERROR] boom","req":{"method":"GET"},"latency":"250ms","size":"2KB"}"#,
        &[("trace_id", "abc")],
    ),
    (
        "j2",
        &[("app", "api"), ("env", "prod")],
        r#"{"level":"info","status":200,"msg":"ok","req":{"method":"POST"},"latency":"1.5s","size":"512"}"#,
        &[],
    ),
    (
        "f1",
        &[("app", "api"), ("env", "prod")],
        r#"level=warn status=404 msg="not found" app=shadow"#,
        &[],
    ),
    (
        "p1",
        &[("app", "api-gateway"), ("env", "dev")],
        "plain text line with a.b and (x)",
        &[("trace_id", "def")],
    ),
    (
        "j3",
        &[("app", "api-gateway"), ("env", "dev")],
        r#"{"level":"debug","env":"staging","status":"abc"}"#,
        &[],
    ),
    (
        "f2",
        &[("app", "web"), ("env", "prod")],
        r#"level=error status=503 latency=2s user="o'brien \"q\"""#,
        &[],
    ),
    (
        "p2",
        &[("app", "web"), ("env", "prod")],
        "ERROR: Disk [full] at 95%",
        &[],
    ),
    ("p3", &[("app", "web"), ("env", "prod")], "tab\there", &[]),
    (
        "q1",
        &[("app", "quote"), ("env", "test")],
        r#"say "hi" \ path C:\dir [x] ✓"#,
        &[("weird", "a\"b\\c\nd ✓")],
    ),
];

struct Vl {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl Drop for Vl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn http(port: u16, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("write");
    s.write_all(body).expect("write");
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).expect("read");
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let status = resp.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let (headers, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    let body = if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn form_encode(s: &str) -> String {
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

fn start_vl(bin: &str) -> Vl {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let dir = std::env::temp_dir().join(format!("lokivl-logsql-ast-{}-{port}", std::process::id()));
    let child = Command::new(bin)
        .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
        .arg(format!("-storageDataPath={}", dir.display()))
        .arg("-loggerLevel=ERROR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start VictoriaLogs");
    let vl = Vl { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "VictoriaLogs did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    vl
}

fn ingest(vl: &Vl) -> u128 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_nanos();
    let streams: Vec<serde_json::Value> = DATASET
        .iter()
        .enumerate()
        .map(|(i, (_, labels, line, meta))| {
            let labels: serde_json::Map<_, _> = labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), serde_json::json!(v)))
                .collect();
            let meta: serde_json::Map<_, _> = meta
                .iter()
                .map(|(k, v)| ((*k).to_owned(), serde_json::json!(v)))
                .collect();
            let ts = (now - 60_000_000_000 + i as u128 * 1_000_000).to_string();
            serde_json::json!({"stream": labels, "values": [[ts, line, meta]]})
        })
        .collect();
    let body = serde_json::json!({ "streams": streams }).to_string();
    let (status, text) = http(
        vl.port,
        "POST",
        "/insert/loki/api/v1/push?disable_message_parsing=1",
        "application/json",
        body.as_bytes(),
    );
    assert!(status == 200 || status == 204, "push: {status} {text}");
    let (status, _) = http(vl.port, "GET", "/internal/force_flush", "text/plain", b"");
    assert_eq!(status, 200, "force_flush");
    now
}

#[test]
fn lowered_queries_select_expected_lines_in_victorialogs() {
    let Ok(bin) = std::env::var("LOKIVL_VL_BIN") else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: LOKIVL_VL_BIN is unset; VictoriaLogs lowering check\n"),
        );
        return;
    };
    let vl = start_vl(&bin);
    let now = ingest(&vl);
    let ids: std::collections::HashMap<&str, &str> = DATASET
        .iter()
        .map(|(id, _, line, _)| (*line, *id))
        .collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    for c in cases() {
        let Some(expect) = &c.expect else { continue };
        let plan = match lower(&c.logql) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("lowering.txt:{}: {e}", c.line));
                continue;
            }
        };
        let query = plan.query.to_string();
        let body = format!(
            "query={}&start={}&end={}",
            form_encode(&query),
            now - 3_600_000_000_000,
            now + 3_600_000_000_000
        );
        let (status, text) = http(
            vl.port,
            "POST",
            "/select/logsql/query",
            "application/x-www-form-urlencoded",
            body.as_bytes(),
        );
        if status != 200 {
            failures.push(format!(
                "lowering.txt:{}: {query}\n  VictoriaLogs {status}: {text}",
                c.line
            ));
            continue;
        }
        let got: BTreeSet<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("ndjson");
                let msg = v["_msg"].as_str().unwrap_or_default().to_owned();
                ids.get(msg.as_str()).map_or(msg, |id| (*id).to_owned())
            })
            .collect();
        if got != *expect {
            failures.push(format!(
                "lowering.txt:{}: {query}\n  want {expect:?}\n  got  {got:?}",
                c.line
            ));
        }
        checked += 1;
    }
    assert!(checked > 15, "only {checked} cases carry expect:");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

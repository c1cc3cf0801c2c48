//! lokivl in front of a real VictoriaLogs cluster started from the same
//! binary (`VictoriaLogs::start_cluster`: two storage nodes and a
//! `-storageNode` front), whatever `LOKIVL_VL_CLUSTER` says: the streams
//! really are spread over both storage nodes and read back whole through
//! lokivl, tenants stay apart, and a select-only front (`-insert.disable`)
//! refusing a push is answered so that Loki clients retry. The whole e2e
//! suite runs against a cluster with `LOKIVL_VL_CLUSTER=1` (docs/testing.md).
//! Skipped (one printed line) without a VictoriaLogs binary.

use std::collections::BTreeSet;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::support::backend::{VictoriaLogs, find_vl_binary};
use crate::support::client;
use crate::support::start_lokivl_with;

/// Streams pushed, `app="s00"` … `app="s23"`, three lines each.
const STREAMS: usize = 24;
const LINES: usize = 3;

fn skip() {
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!(
            "skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN or put victoria-logs on PATH)\n"
        ),
    );
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// A Loki push body of `STREAMS` streams of `LINES` lines, the newest a
/// minute before `now`.
fn streams_body(now: i64) -> String {
    let streams: Vec<Value> = (0..STREAMS)
        .map(|s| {
            let values: Vec<Value> = (0..LINES)
                .map(|l| {
                    let t = now - 60_000_000_000 - (s * LINES + l) as i64 * 1_000_000;
                    serde_json::json!([t.to_string(), format!("stream {s} line {l}")])
                })
                .collect();
            serde_json::json!({"stream": {"app": format!("s{s:02}")}, "values": values})
        })
        .collect();
    serde_json::json!({ "streams": streams }).to_string()
}

/// The number of entries of tenant `account`:0 that node `url` answers for.
async fn entries_on(url: &str, account: &str) -> u64 {
    let (status, _, body) = client::send(
        "POST",
        &format!("{url}/select/logsql/query"),
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("AccountID", account),
            ("ProjectID", "0"),
        ],
        b"query=* | stats count() n".to_vec(),
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(status, 200, "{url}: {body}");
    let row: Value = serde_json::from_str(body.trim()).unwrap();
    row["n"].as_str().unwrap().parse().unwrap()
}

/// `GET {base}{path}` with `params` as tenant `org`; the answer's `data`.
async fn data(base: &str, path: &str, params: &[(&str, &str)], org: &str) -> Value {
    let url = client::url(base, path, params);
    let (status, _, body) = client::try_get(&url, &[("X-Scope-OrgID", org)])
        .await
        .map(client::Answer::parts)
        .unwrap();
    assert_eq!(status, 200, "{url}: {body}");
    serde_json::from_str::<Value>(&body).unwrap()["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_spread_over_both_storage_nodes_read_back_whole() {
    let Some(bin) = find_vl_binary() else {
        return skip();
    };
    let vl = VictoriaLogs::start_cluster(&bin, &[], &[]).await;
    let storage = vl.storage_urls();
    assert_eq!(storage.len(), 2);
    let now = now_ns();
    vl.ingest_as("7", streams_body(now)).await;

    let total = (STREAMS * LINES) as u64;
    let on_nodes = [
        entries_on(storage[0], "7").await,
        entries_on(storage[1], "7").await,
    ];
    assert!(
        on_nodes.iter().all(|&n| n > 0),
        "every storage node holds some streams: {on_nodes:?}"
    );
    assert_eq!(on_nodes[0] + on_nodes[1], total, "{on_nodes:?}");
    assert_eq!(entries_on(&vl.url, "7").await, total);
    assert_eq!(entries_on(&vl.url, "8").await, 0, "another tenant is empty");

    let base = start_lokivl_with(&vl.url, |_| {}).await;
    let (start, end) = ((now - 3_600_000_000_000).to_string(), now.to_string());
    let range = [("start", start.as_str()), ("end", end.as_str())];
    let apps: BTreeSet<String> = (0..STREAMS).map(|s| format!("s{s:02}")).collect();

    let values = data(&base, "/loki/api/v1/label/app/values", &range, "7").await;
    let got: BTreeSet<String> = values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, apps);

    let mut params = range.to_vec();
    params.extend([("query", r#"{app=~"s.+"}"#), ("limit", "1000")]);
    let logs = data(&base, "/loki/api/v1/query_range", &params, "7").await;
    let mut lines: Vec<String> = logs["result"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["values"].as_array().unwrap().clone())
        .map(|v| v[1].as_str().unwrap().to_owned())
        .collect();
    lines.sort();
    let mut want: Vec<String> = (0..STREAMS)
        .flat_map(|s| (0..LINES).map(move |l| format!("stream {s} line {l}")))
        .collect();
    want.sort();
    assert_eq!(lines, want);

    let mut params = range.to_vec();
    params.extend([
        ("query", r#"sum(count_over_time({app=~"s.+"}[2h]))"#),
        ("time", end.as_str()),
    ]);
    let count = data(&base, "/loki/api/v1/query", &params, "7").await;
    assert_eq!(count["result"][0]["value"][1], total.to_string());

    let empty = data(&base, "/loki/api/v1/label/app/values", &range, "8").await;
    assert_eq!(empty, serde_json::json!([]), "tenant 8 sees none of 7's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_select_only_front_refuses_pushes_with_a_retryable_502() {
    let Some(bin) = find_vl_binary() else {
        return skip();
    };
    let vl = VictoriaLogs::start_cluster(&bin, &[], &["-insert.disable"]).await;
    let base = start_lokivl_with(&vl.url, |s| s.enable_push = true).await;
    let (status, body) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[("content-type", "application/json")],
        streams_body(now_ns()).into_bytes(),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 502, "{body}");
    assert_eq!(
        body,
        "VictoriaLogs at the backend does not ingest (requests to /insert/* are disabled with \
         -insert.disable command-line flag); send pushes to a vlinsert or to a node without \
         -insert.disable"
    );
    // Queries through the same front still work, and nothing was stored.
    vl.flush().await;
    assert_eq!(entries_on(&vl.url, "0").await, 0);
    let now = now_ns().to_string();
    let values = data(
        &base,
        "/loki/api/v1/labels",
        &[("start", "0"), ("end", now.as_str())],
        "0",
    )
    .await;
    assert_eq!(values, serde_json::json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storage_node_down_is_a_502_and_pushes_go_on() {
    let Some(bin) = find_vl_binary() else {
        return skip();
    };
    let mut vl = VictoriaLogs::start_cluster(&bin, &[], &[]).await;
    let now = now_ns();
    vl.ingest(streams_body(now)).await;
    let base = start_lokivl_with(&vl.url, |s| s.enable_push = true).await;
    let (start, end) = ((now - 3_600_000_000_000).to_string(), now.to_string());
    let params = [
        ("start", start.as_str()),
        ("end", end.as_str()),
        ("query", r#"{app=~"s.+"}"#),
        ("limit", "1000"),
    ];
    let url = client::url(&base, "/loki/api/v1/query_range", &params);
    let (status, _, body) = client::try_get(&url, &[]).await.unwrap().parts();
    assert_eq!(status, 200, "{body}");

    vl.stop_storage_node(1);
    let (status, _, body) = client::try_get(&url, &[]).await.unwrap().parts();
    assert_eq!(status, 502, "{body}");
    assert!(
        body.starts_with("VictoriaLogs failed (502 Bad Gateway): cannot execute query")
            && body.contains("cannot connect to storage node"),
        "{body}"
    );
    // The front writes new entries to the storage node that is left (all
    // of them, once its retry of the dead node's share has gone through).
    let left = vl.storage_urls()[0].to_owned();
    let before = entries_on(&left, "0").await;
    assert!(
        before < (STREAMS * LINES) as u64,
        "the first push was spread"
    );
    let (status, body) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[("content-type", "application/json")],
        streams_body(now + 1_000_000_000).into_bytes(),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 204, "{body}");
    let want = before + (STREAMS * LINES) as u64;
    let mut got = 0;
    for _ in 0..100 {
        vl.flush().await;
        got = entries_on(&left, "0").await;
        if got == want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(got, want);
}

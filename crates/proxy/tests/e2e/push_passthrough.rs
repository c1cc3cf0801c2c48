//! `--enable-push`: `/loki/api/v1/push` is forwarded to VictoriaLogs' Loki
//! ingestion unchanged (JSON, and protobuf+snappy as Promtail/Alloy send it).
//!
//! A recording fake checks what is forwarded; with a real VictoriaLogs
//! (`LOKIVL_VL_BIN`) lines pushed through lokivl are read back through lokivl.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::backend::{VictoriaLogs, find_vl_binary};
use crate::support::client;
use crate::support::start_lokivl_with as start_lokivl;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;

type Seen = Arc<Mutex<Vec<(String, HeaderMap, Vec<u8>)>>>;

/// A fake VictoriaLogs that records pushes; bodies starting with `bad` get a 400.
async fn recording_vl() -> (String, Seen) {
    let seen: Seen = Arc::default();
    async fn handler(
        State(seen): State<Seen>,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> axum::response::Response {
        let bad = body.starts_with(b"bad");
        seen.lock()
            .unwrap()
            .push((uri.to_string(), headers, body.to_vec()));
        if bad {
            (StatusCode::BAD_REQUEST, "cannot parse Loki request").into_response()
        } else {
            StatusCode::NO_CONTENT.into_response()
        }
    }
    let app = Router::new().fallback(handler).with_state(seen.clone());
    let url = crate::support::fake_vl::FakeVl::serving(app).await.url;
    (url, seen)
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field_bytes(field: u64, data: &[u8], out: &mut Vec<u8>) {
    varint((field << 3) | 2, out);
    varint(data.len() as u64, out);
    out.extend_from_slice(data);
}

fn field_varint(field: u64, v: u64, out: &mut Vec<u8>) {
    varint(field << 3, out);
    varint(v, out);
}

/// A Loki `PushRequest` protobuf: one stream, entries of (ns, line).
fn push_proto(labels: &str, entries: &[(i64, &str)]) -> Vec<u8> {
    let mut stream = Vec::new();
    field_bytes(1, labels.as_bytes(), &mut stream);
    for (ns, line) in entries {
        let mut ts = Vec::new();
        field_varint(1, (ns / 1_000_000_000) as u64, &mut ts);
        field_varint(2, (ns % 1_000_000_000) as u64, &mut ts);
        let mut entry = Vec::new();
        field_bytes(1, &ts, &mut entry);
        field_bytes(2, line.as_bytes(), &mut entry);
        field_bytes(2, &entry, &mut stream);
    }
    let mut req = Vec::new();
    field_bytes(1, &stream, &mut req);
    req
}

/// Snappy block format with literals only (valid, just not compressed).
fn snappy_literal(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(data.len() as u64, &mut out);
    for chunk in data.chunks(65_536) {
        let n = chunk.len() - 1;
        if n < 60 {
            out.push((n as u8) << 2);
        } else if n < 256 {
            out.extend_from_slice(&[60 << 2, n as u8]);
        } else {
            out.extend_from_slice(&[61 << 2, n as u8, (n >> 8) as u8]);
        }
        out.extend_from_slice(chunk);
    }
    out
}

#[tokio::test]
async fn push_is_405_unless_enabled() {
    let (vl, seen) = recording_vl().await;
    let base = start_lokivl(&vl, |_| {}).await;
    let (status, body) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[("content-type", "application/json")],
        b"{}".to_vec(),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 405, "{body}");
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn bodies_and_content_headers_pass_through_unchanged() {
    let (vl, seen) = recording_vl().await;
    let base = start_lokivl(&vl, |s| s.enable_push = true).await;
    let json = br#"{"streams":[{"stream":{"app":"a"},"values":[["1","x"]]}]}"#.to_vec();
    let (status, body) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push?_stream_fields=app"),
        &[
            ("content-type", "application/json"),
            ("authorization", "Bearer client-secret"),
        ],
        json.clone(),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 204, "{body}");
    let proto = snappy_literal(&push_proto(r#"{app="b"}"#, &[(1, "y")]));
    let (status, _) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[
            ("content-type", "application/x-protobuf"),
            ("content-encoding", "snappy"),
        ],
        proto.clone(),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 204);
    // A body VictoriaLogs rejects keeps its 4xx and text.
    let (status, body) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[("content-type", "application/json")],
        b"bad".to_vec(),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 400);
    assert!(body.contains("cannot parse Loki request"), "{body}");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let (uri, h, b) = &seen[0];
    assert_eq!(uri, "/insert/loki/api/v1/push?_stream_fields=app");
    assert_eq!(h["content-type"], "application/json");
    // The client's credentials are not passed on to VictoriaLogs.
    assert!(h.get("authorization").is_none());
    assert_eq!(b, &json);
    let (uri, h, b) = &seen[1];
    assert_eq!(uri, "/insert/loki/api/v1/push");
    assert_eq!(h["content-type"], "application/x-protobuf");
    assert_eq!(h["content-encoding"], "snappy");
    assert_eq!(b, &proto);
}

#[tokio::test]
async fn oversized_push_is_413() {
    let (vl, seen) = recording_vl().await;
    let base = start_lokivl(&vl, |s| {
        s.enable_push = true;
        s.limits.max_body_bytes = 100;
    })
    .await;
    let (status, _) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[("content-type", "application/json")],
        vec![b' '; 1000],
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 413);
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_lines_read_back_from_a_real_victorialogs() {
    let Some(bin) = find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!(
                "skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN or put victoria-logs on PATH)\n"
            ),
        );
        return;
    };
    let vl = VictoriaLogs::start(&bin).await;
    let base = start_lokivl(&vl.url, |s| s.enable_push = true).await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let t1 = now - 60_000_000_000;
    let t2 = t1 + 1_000_000;
    let json = format!(
        r#"{{"streams":[{{"stream":{{"app":"pushjson"}},"values":[["{t1}","json line one"],["{t2}","json line two"]]}}]}}"#
    );
    let (status, body) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[("content-type", "application/json")],
        json.into_bytes(),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 204, "{body}");
    let proto = snappy_literal(&push_proto(
        r#"{app="pushpb"}"#,
        &[(t1, "proto line one"), (t2, "proto line two")],
    ));
    let (status, body) = client::send(
        "POST",
        &format!("{base}/loki/api/v1/push"),
        &[("content-type", "application/x-protobuf")],
        proto,
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 204, "{body}");
    vl.flush().await;
    for (app, lines) in [
        ("pushjson", ["json line two", "json line one"]),
        ("pushpb", ["proto line two", "proto line one"]),
    ] {
        let q = form_urlencoded::Serializer::new(String::new())
            .append_pair("query", &format!(r#"{{app="{app}"}}"#))
            .append_pair("start", &(t1 - 1_000_000_000).to_string())
            .append_pair("end", &(now + 1_000_000_000).to_string())
            .finish();
        let (status, body) = client::send(
            "GET",
            &format!("{base}/loki/api/v1/query_range?{q}"),
            &[],
            Vec::new(),
        )
        .await
        .map(|a| (a.status.as_u16(), a.body))
        .unwrap();
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let result = v["data"]["result"].as_array().unwrap();
        assert_eq!(result.len(), 1, "{body}");
        let values = result[0]["values"].as_array().unwrap();
        let got: Vec<(&str, &str)> = values
            .iter()
            .map(|e| (e[0].as_str().unwrap(), e[1].as_str().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                (t2.to_string().as_str(), lines[0]),
                (t1.to_string().as_str(), lines[1])
            ],
            "{body}"
        );
    }
}

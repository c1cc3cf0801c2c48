//! Writing the dataset into VictoriaLogs through its Loki push endpoint.

use std::time::Instant;

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::Method;

use crate::client::Target;
use crate::dataset::{Dataset, push_body};

/// VictoriaLogs' Loki push path; lines are stored verbatim (no message parsing).
const PUSH: &str = "/insert/loki/api/v1/push?disable_message_parsing=1";

/// Pushes every entry of `set` in batches of `batch`, with `parallel` pushes
/// in flight, then flushes so queries see everything. Returns the entry count.
///
/// # Errors
/// Any push that VictoriaLogs does not accept with 2xx.
pub(crate) async fn ingest(
    vl: &Target,
    set: &Dataset,
    batch: usize,
    parallel: usize,
) -> anyhow::Result<u64> {
    let started = Instant::now();
    let mut total = 0u64;
    let mut inflight = tokio::task::JoinSet::new();
    for entries in set.batches(batch) {
        total += entries.len() as u64;
        let body = Bytes::from(push_body(set, &entries));
        let vl = vl.clone();
        inflight.spawn(async move {
            vl.send(
                Method::POST,
                PUSH,
                &[("Content-Type", "application/json")],
                body,
            )
            .await
        });
        while inflight.len() >= parallel.max(1) {
            check(inflight.join_next().await)?;
        }
    }
    while !inflight.is_empty() {
        check(inflight.join_next().await)?;
    }
    let flush = vl.get("/internal/force_flush", &[]).await;
    if flush.status != 200 {
        bail!("force_flush answered {}", flush.status);
    }
    eprintln!(
        "ingested {total} entries in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(total)
}

/// Counts the entries VictoriaLogs holds.
///
/// # Errors
/// A failed or unreadable answer.
pub(crate) async fn count(vl: &Target) -> anyhow::Result<u64> {
    let r = vl
        .get(
            "/select/logsql/query?query=*%20%7C%20stats%20count()%20n",
            &[],
        )
        .await;
    if r.status != 200 {
        bail!("count query answered {}", r.status);
    }
    let v: serde_json::Value = serde_json::from_slice(&r.body).context("count answer")?;
    v["n"]
        .as_str()
        .and_then(|n| n.parse().ok())
        .context("count answer has no n")
}

fn check(
    joined: Option<Result<crate::client::Reply, tokio::task::JoinError>>,
) -> anyhow::Result<()> {
    match joined {
        Some(Ok(r)) if (200..300).contains(&r.status) => Ok(()),
        Some(Ok(r)) => bail!(
            "push answered {}: {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        ),
        Some(Err(e)) => bail!("push task failed: {e}"),
        None => Ok(()),
    }
}

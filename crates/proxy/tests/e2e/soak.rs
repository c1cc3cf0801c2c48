//! Soak test: 200 concurrent clients for 60 s of mixed Grafana-like queries
//! (log and metric ranges, labels, series, volume, detected fields, each at
//! 20 end times so most requests miss the whole-answer cache) against lokivl
//! (its own process) in front of a real VictoriaLogs.
//!
//! Gated: runs only with `LOKIVL_SOAK=1` and a VictoriaLogs binary
//! (`LOKIVL_VL_BIN` or `victoria-logs` on PATH), so CI stays fast; otherwise it
//! prints one line and passes. `LOKIVL_SOAK_SECS` and `LOKIVL_SOAK_CLIENTS`
//! change the duration and concurrency. It asserts zero unexpected answers and
//! lokivl's resident memory (from its own `/metrics`) under the cache bound
//! plus 64 MiB; throughput is printed, never asserted.
//!
//! ```sh
//! LOKIVL_SOAK=1 LOKIVL_VL_BIN=/opt/vl/victoria-logs \
//!   cargo test --release -p proxy --test e2e soak -- --nocapture
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::support::backend::{VictoriaLogs, find_vl_binary};
use crate::support::client;
use crate::support::lokivl::Lokivl;

/// lokivl's default response-cache bound (`--cache-max-bytes`, 256 MiB).
const CACHE_BOUND: u64 = 256 << 20;
/// What the issue allows above the cache bound.
const HEADROOM: u64 = 64 << 20;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Kills lokivl when the test ends, however it ends.
async fn rss(base: &str) -> Option<u64> {
    let (_, text) = client::send("GET", &format!("{base}/metrics"), &[], Vec::new())
        .await
        .map(|a| (a.status.as_u16(), a.body))
        .ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("process_resident_memory_bytes "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn soak_200_clients_mixed_queries() {
    if std::env::var_os("LOKIVL_SOAK").is_none() {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: set LOKIVL_SOAK=1 (and LOKIVL_VL_BIN) to run the soak test\n"),
        );
        return;
    }
    let Some(bin) = find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!(
                "skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN or put victoria-logs on PATH)\n"
            ),
        );
        return;
    };
    let secs = env_num("LOKIVL_SOAK_SECS", 60);
    let clients = env_num("LOKIVL_SOAK_CLIENTS", 200);
    let vl = VictoriaLogs::start(&bin).await;

    // 20 streams x 1000 entries over the last hour, some JSON lines.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let hour = 3_600_000_000_000i64;
    for s in 0..20 {
        let mut values = Vec::new();
        for i in 0..1000i64 {
            let t = now - hour + (i * hour / 1000) + s;
            let line = if i % 3 == 0 {
                format!(
                    r#"{{"level":"error","msg":"request {i} failed","status":{}}}"#,
                    500 + i % 4
                )
            } else {
                format!(
                    "level=info msg=\"served request {i}\" duration={}ms",
                    i % 250
                )
            };
            values.push(serde_json::json!([t.to_string(), line]));
        }
        let body = serde_json::json!({"streams": [{
            "stream": {"app": format!("app{}", s % 5), "env": if s % 2 == 0 { "prod" } else { "dev" }, "pod": format!("pod-{s}")},
            "values": values,
        }]});
        let (status, text) = client::send(
            "POST",
            &format!("{}/insert/loki/api/v1/push", vl.url),
            &[("content-type", "application/json")],
            body.to_string().into_bytes(),
        )
        .await
        .map(|a| (a.status.as_u16(), a.body))
        .unwrap();
        assert!(status == 204 || status == 200, "{status} {text}");
    }
    vl.flush().await;

    // Waits until `/ready` answers 200; killed on drop.
    let lokivl = Lokivl::start(&vl.url, &[]).await;
    let base = lokivl.base.clone();
    let rss_start = rss(&base).await.unwrap_or(0);

    let start_s = (now - hour) / 1_000_000_000;
    let end_s = now / 1_000_000_000 + 1;
    let qs = |pairs: &[(&str, String)]| {
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
            .finish()
    };
    let range = |q: &str, end_s: i64, extra: &[(&str, &str)]| {
        let mut pairs = vec![
            ("query", q.to_owned()),
            ("start", start_s.to_string()),
            ("end", end_s.to_string()),
        ];
        pairs.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
        format!("/loki/api/v1/query_range?{}", qs(&pairs))
    };
    let window = |path: &str, q: Option<&str>, end_s: i64| {
        let mut pairs = vec![("start", start_s.to_string()), ("end", end_s.to_string())];
        if let Some(q) = q {
            pairs.push(("query", q.to_owned()));
        }
        format!("{path}?{}", qs(&pairs))
    };
    // Every kind at 20 end times a second apart, so most requests miss the
    // whole-answer cache and fill it with many entries.
    let mut all: Vec<(&'static str, String)> = Vec::new();
    for k in 0..20 {
        let end_s = end_s - k;
        all.extend([
            ("logs", range(r#"{app="app1"}"#, end_s, &[("limit", "100")])),
            (
                "logs_filter",
                range(r#"{env="prod"} |= "failed""#, end_s, &[("limit", "1000")]),
            ),
            (
                "logs_json",
                range(
                    r#"{app=~"app[0-4]"} | json | level="error""#,
                    end_s,
                    &[("limit", "500")],
                ),
            ),
            (
                "logs_logfmt",
                range(
                    r#"{app="app2"} | logfmt | duration > 100ms"#,
                    end_s,
                    &[("limit", "200")],
                ),
            ),
            (
                "metric_rate",
                range(
                    r#"sum by (app) (rate({env="prod"}[5m]))"#,
                    end_s,
                    &[("step", "60")],
                ),
            ),
            (
                "metric_logfmt",
                range(
                    r#"sum by (level) (count_over_time({app="app3"} | logfmt [1m]))"#,
                    end_s,
                    &[("step", "30")],
                ),
            ),
            ("labels", window("/loki/api/v1/labels", None, end_s)),
            (
                "label_values",
                window("/loki/api/v1/label/pod/values", None, end_s),
            ),
            (
                "series",
                format!(
                    "/loki/api/v1/series?{}",
                    qs(&[
                        ("match[]", r#"{env="dev"}"#.to_owned()),
                        ("start", start_s.to_string()),
                        ("end", end_s.to_string())
                    ])
                ),
            ),
            (
                "volume",
                window("/loki/api/v1/index/volume", Some(r#"{env="prod"}"#), end_s),
            ),
            (
                "detected",
                window(
                    "/loki/api/v1/detected_fields",
                    Some(r#"{app="app4"}"#),
                    end_s,
                ),
            ),
        ]);
    }
    all.extend([
        (
            "instant",
            format!(
                "/loki/api/v1/query?{}",
                qs(&[("query", "vector(1)+vector(1)".to_owned())])
            ),
        ),
        ("buildinfo", "/loki/api/v1/status/buildinfo".to_owned()),
    ]);
    let urls: Arc<Vec<(&'static str, String)>> = Arc::new(all);

    let deadline = Instant::now() + Duration::from_secs(secs);
    let outcomes: Arc<Mutex<BTreeMap<(String, u16), u64>>> = Arc::default();
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let client = client::Client::pooled(clients as usize);
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (urls, outcomes, errors, client, base) = (
            urls.clone(),
            outcomes.clone(),
            errors.clone(),
            client.clone(),
            base.clone(),
        );
        tasks.push(tokio::spawn(async move {
            // Clients step through the list by a stride prime to its
            // length, each from its own place.
            let mut i = c as usize * 7;
            while Instant::now() < deadline {
                let (kind, path) = &urls[i % urls.len()];
                i += 13;
                let r = client
                    .send("GET", &format!("{base}{path}"), &[], Vec::new())
                    .await
                    .map(|a| (a.status.as_u16(), a.body));
                let status = match &r {
                    Ok((s, _)) => *s,
                    Err(_) => 0,
                };
                *outcomes
                    .lock()
                    .unwrap()
                    .entry(((*kind).to_owned(), status))
                    .or_default() += 1;
                if status != 200 {
                    let mut e = errors.lock().unwrap();
                    if e.len() < 20 {
                        e.push(format!(
                            "{kind}: {status} {:?}",
                            r.map(|x| x.1.chars().take(200).collect::<String>())
                        ));
                    }
                }
            }
        }));
    }
    let mut rss_max = rss_start;
    let sampler_deadline = deadline;
    while Instant::now() < sampler_deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if let Some(r) = rss(&base).await {
            rss_max = rss_max.max(r);
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    let rss_end = rss(&base).await.unwrap_or(0);
    let outcomes = outcomes.lock().unwrap();
    let total: u64 = outcomes.values().sum();
    let bad: u64 = outcomes
        .iter()
        .filter(|((_, s), _)| *s != 200)
        .map(|(_, n)| n)
        .sum();
    println!(
        "soak: {clients} clients, {secs} s, {total} requests ({:.0}/s), {bad} unexpected",
        total as f64 / secs as f64
    );
    for ((kind, status), n) in outcomes.iter() {
        println!("soak:   {kind:<13} {status} x{n}");
    }
    println!(
        "soak: lokivl RSS start {:.1} MiB, max {:.1} MiB, end {:.1} MiB (bound {:.0} MiB)",
        rss_start as f64 / 1048576.0,
        rss_max as f64 / 1048576.0,
        rss_end as f64 / 1048576.0,
        (CACHE_BOUND + HEADROOM) as f64 / 1048576.0
    );
    assert_eq!(bad, 0, "unexpected answers: {:#?}", errors.lock().unwrap());
    assert!(total > 0);
    assert!(rss_max > 0, "no process_resident_memory_bytes in /metrics");
    assert!(
        rss_max < CACHE_BOUND + HEADROOM,
        "RSS {rss_max} over the bound"
    );
}

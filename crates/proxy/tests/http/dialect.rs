//! The VictoriaLogs release's time-bucket offset rule, against fake servers:
//! lokivl probes it once, writes every bucketed query in it, and an answer
//! whose buckets start elsewhere than asked switches the rule and is asked
//! again. `proxy::backend::dialect` has the rules; the live suites check
//! the values against real v1.26 and v1.51 servers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::StatusCode;
use serde_json::json;

const S: i64 = 1_000_000_000;

/// Windows `(t − 1m, t]` at whole seconds need buckets starting at 1 ns
/// (mod 1 min): offset `1ns` under v1.26's rule, `59999999999ns` under v1.51's.
const PLUS_OFFSET: &str = "offset 1ns";
const MINUS_OFFSET: &str = "offset 59999999999ns";

/// What a fake VictoriaLogs is, switchable while it runs.
#[derive(Default)]
struct Release {
    /// Buckets like v1.26 (else v1.51).
    v126: AtomicBool,
    /// Answers 503 to everything (down).
    down: AtomicBool,
}

/// A fake VictoriaLogs that buckets like `release` says: for the offset
/// lokivl writes, it labels the bucket `(60 s, 120 s]` where that release
/// would start it, with 7 entries, and `(120 s, 180 s]` with 4; it answers
/// the probe with `probe`, or as its release does when `probe` is `None`.
/// Returns its address and the queries it received.
async fn fake_with(
    release: Arc<Release>,
    probe: Option<&'static str>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().fallback(move |body: axum::body::Bytes| {
        let (log, release) = (log.clone(), release.clone());
        async move {
            if release.down.load(Ordering::Relaxed) {
                return (StatusCode::SERVICE_UNAVAILABLE, "down".to_owned());
            }
            let v126 = release.v126.load(Ordering::Relaxed);
            let q = form_urlencoded::parse(&body)
                .find(|(k, _)| k == "query")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            log.lock().unwrap().push(q.clone());
            if q == proxy::backend::dialect::PROBE {
                let own = if v126 { PROBE_V126 } else { PROBE_V151 };
                return (StatusCode::OK, probe.unwrap_or(own).to_owned());
            }
            // Where this release starts the buckets for the offset written.
            let starts_at_one = q.contains(PLUS_OFFSET) == v126;
            let (a, b) = if starts_at_one {
                ("00:01:00.000000001", "00:02:00.000000001")
            } else {
                ("00:00:59.999999999", "00:01:59.999999999")
            };
            (
                StatusCode::OK,
                format!(
                    "{{\"_time\":\"1970-01-01T{a}Z\",\"__lokivl_c\":\"7\"}}\n\
                     {{\"_time\":\"1970-01-01T{b}Z\",\"__lokivl_c\":\"4\"}}\n"
                ),
            )
        }
    });
    let addr = crate::support::fake_vl::FakeVl::serving(app).await.addr;
    (addr, seen)
}

/// [`fake_with`] of a fixed release.
async fn fake(v126: bool, probe: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let release = Release::default();
    release.v126.store(v126, Ordering::Relaxed);
    fake_with(Arc::new(release), Some(probe)).await
}

async fn count_at(base: &str, time_s: i64) -> serde_json::Value {
    let time = (time_s * S).to_string();
    let a = get(&format!(
        "{base}/loki/api/v1/query?{}",
        qs(&[
            ("query", r#"sum(count_over_time({app="api"}[1m]))"#),
            ("time", &time),
        ])
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.json()["data"]["result"].clone()
}

async fn offset_rule_metric(base: &str) -> (bool, bool) {
    let a = get(&format!("{base}/metrics")).await;
    let has = |line: &str| a.body.lines().any(|l| l == line);
    (
        has(r#"lokivl_victorialogs_bucket_offset_rule{rule="plus"} 1"#),
        has(r#"lokivl_victorialogs_bucket_offset_rule{rule="minus"} 1"#),
    )
}

fn stats_queries(seen: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|q| *q != proxy::backend::dialect::PROBE)
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_probe_names_the_rule_of_each_release_once() {
    for (v126, probe, offset) in [
        (true, PROBE_V126, PLUS_OFFSET),
        (false, PROBE_V151, MINUS_OFFSET),
    ] {
        let (addr, seen) = fake(v126, probe).await;
        let base =
            start_proxy(proxy::config::Settings::new(&format!("http://{addr}")).unwrap()).await;
        assert_eq!(
            count_at(&base, 120).await,
            json!([{"metric": {}, "value": [120, "7"]}])
        );
        assert_eq!(
            count_at(&base, 180).await,
            json!([{"metric": {}, "value": [180, "4"]}])
        );
        let all = seen.lock().unwrap().clone();
        assert_eq!(
            all[0],
            proxy::backend::dialect::PROBE,
            "probed first: {all:?}"
        );
        let stats = stats_queries(&seen);
        assert_eq!(all.len(), stats.len() + 1, "one probe: {all:?}");
        assert_eq!(
            stats,
            vec![
                format!(
                    r#"{{app="api"}} | stats by (_time:60000000000ns {offset}) count() "__lokivl_c""#
                );
                2
            ]
        );
        assert_eq!(offset_rule_metric(&base).await, (v126, !v126));
    }
}

#[tokio::test]
async fn buckets_starting_elsewhere_switch_the_rule_and_are_asked_again() {
    // The probe finds no entry: lokivl writes the current releases' rule,
    // and a v1.26 server shows in its answer that it follows the other.
    let (addr, seen) = fake(true, "").await;
    let base = start_proxy(proxy::config::Settings::new(&format!("http://{addr}")).unwrap()).await;
    assert_eq!(
        offset_rule_metric(&base).await,
        (false, false),
        "nothing known yet"
    );
    assert_eq!(
        count_at(&base, 120).await,
        json!([{"metric": {}, "value": [120, "7"]}])
    );
    let stats = stats_queries(&seen);
    assert_eq!(stats.len(), 2, "{stats:?}");
    assert!(stats[0].contains(MINUS_OFFSET), "{stats:?}");
    assert!(stats[1].contains(PLUS_OFFSET), "{stats:?}");
    assert_eq!(offset_rule_metric(&base).await, (true, false));

    // Learnt: the next query is written in v1.26's rule at once, unprobed.
    assert_eq!(
        count_at(&base, 180).await,
        json!([{"metric": {}, "value": [180, "4"]}])
    );
    let stats = stats_queries(&seen);
    assert_eq!(stats.len(), 3, "{stats:?}");
    assert!(stats[2].contains(PLUS_OFFSET), "{stats:?}");
    let probes = seen.lock().unwrap().len() - stats.len();
    assert_eq!(probes, 1);
}

#[tokio::test]
async fn a_probe_without_entries_is_repeated_at_the_next_query() {
    // An empty server: every answer is empty and right under either rule.
    let h = harness_release(vec![("/select/logsql/query", Canned::ok(""))], "").await;
    for t in [120, 180] {
        assert_eq!(count_at(&h.base, t).await, json!([]));
    }
    assert_eq!(h.vl.probes(), 2);
    assert_eq!(h.vl.requests().len(), 2);
    assert_eq!(offset_rule_metric(&h.base).await, (false, false));
}

#[tokio::test]
async fn the_rule_is_probed_again_when_victorialogs_comes_back() {
    // v1.26, then down, then back as v1.51 (upgraded while down).
    let release = Arc::new(Release::default());
    release.v126.store(true, Ordering::Relaxed);
    let (addr, seen) = fake_with(release.clone(), None).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    settings.backend_options.breaker_failures = 1;
    settings.backend_options.breaker_cooldown = Duration::from_millis(50);
    let base = start_proxy(settings).await;
    assert_eq!(
        count_at(&base, 120).await,
        json!([{"metric": {}, "value": [120, "7"]}])
    );
    assert_eq!(offset_rule_metric(&base).await, (true, false));

    release.down.store(true, Ordering::Relaxed);
    // Another time each: answers for closed ranges are cached.
    let time = (240 * S).to_string();
    let down = get(&format!(
        "{base}/loki/api/v1/query?{}",
        qs(&[
            ("query", r#"sum(count_over_time({app="api"}[1m]))"#),
            ("time", &time),
        ])
    ))
    .await;
    assert_ne!(down.status, StatusCode::OK, "{}", down.body);
    release.v126.store(false, Ordering::Relaxed);
    release.down.store(false, Ordering::Relaxed);
    // Past the cooldown the breaker lets one call through (`/ready` asks
    // VictoriaLogs' `/health`); its success closes the breaker.
    let mut back = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if get(&format!("{base}/ready")).await.status == StatusCode::OK {
            back = true;
            break;
        }
    }
    assert!(back, "VictoriaLogs never came back");
    let before = seen.lock().unwrap().len();
    // The rule was forgotten with the outage: probed again, then written in
    // v1.51's rule at once.
    assert_eq!(
        count_at(&base, 180).await,
        json!([{"metric": {}, "value": [180, "4"]}])
    );
    let after: Vec<String> = seen.lock().unwrap()[before..].to_vec();
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(after[0], proxy::backend::dialect::PROBE);
    assert!(after[1].contains(MINUS_OFFSET), "{after:?}");
    assert_eq!(offset_rule_metric(&base).await, (false, true));
}

#[tokio::test]
async fn a_release_changed_in_place_is_noticed_in_its_first_answer() {
    let release = Arc::new(Release::default());
    release.v126.store(true, Ordering::Relaxed);
    let (addr, seen) = fake_with(release.clone(), None).await;
    let base = start_proxy(proxy::config::Settings::new(&format!("http://{addr}")).unwrap()).await;
    assert_eq!(
        count_at(&base, 120).await,
        json!([{"metric": {}, "value": [120, "7"]}])
    );
    // Upgraded without an outage lokivl saw.
    release.v126.store(false, Ordering::Relaxed);
    assert_eq!(
        count_at(&base, 180).await,
        json!([{"metric": {}, "value": [180, "4"]}])
    );
    let all = seen.lock().unwrap().clone();
    assert_eq!(
        all.len(),
        4,
        "probe, query, and the query asked twice: {all:?}"
    );
    assert!(
        all[2].contains(PLUS_OFFSET) && all[3].contains(MINUS_OFFSET),
        "{all:?}"
    );
    assert_eq!(offset_rule_metric(&base).await, (false, true));
}

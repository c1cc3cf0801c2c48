//! What opens the circuit breaker, which every tenant shares: refused
//! connections, 5xx and a hung `/health` do; queries that are merely slow
//! (past the deadline, or a gateway's 504 for them) do not, so one tenant's
//! heavy queries cannot cut every other tenant off.

use std::time::Duration;

use crate::support::client::get_within;
use crate::support::client::qs;
use crate::support::fake_vl::Canned;
use crate::support::fake_vl::FakeVl;
use crate::support::fake_vl::fake_vl;
use crate::support::fake_vl::faults::Fault;
use crate::support::fake_vl::faults::LINE;
use crate::support::fake_vl::faults::query_url;
use crate::support::fake_vl::faults::settings;
use crate::support::lokivl::start_proxy;
use http::StatusCode;

const BOUND: Duration = Duration::from_secs(5);

#[tokio::test]
async fn slow_queries_do_not_open_the_breaker() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let base = start_proxy(settings(&vl.url)).await;
    // Four queries past the 600 ms deadline; the breaker threshold is 3.
    for _ in 0..4 {
        let a = get_within(&query_url(&base), &[], BOUND).await.unwrap();
        assert_eq!(a.status, 504, "{}", a.body);
        assert!(a.body.contains("timeout"), "{}", a.body);
    }
    vl.set_fault(Fault::Healthy(format!("{LINE}\n")));
    // The very next query reaches VictoriaLogs: no 503 from an open breaker.
    let a = get_within(&query_url(&base), &[], BOUND).await.unwrap();
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(vl.request_count(), 5);
}

#[tokio::test]
async fn a_hung_health_check_opens_the_breaker() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let base = start_proxy(settings(&vl.url)).await;
    for _ in 0..3 {
        let a = get_within(&format!("{base}/ready"), &[], BOUND)
            .await
            .unwrap();
        assert_eq!(a.status, 503, "{}", a.body);
        assert!(a.body.contains("timeout"), "{}", a.body);
    }
    let a = get_within(&query_url(&base), &[], BOUND).await.unwrap();
    assert_eq!(a.status, 503, "{}", a.body);
    assert!(a.body.contains("VictoriaLogs is failing"), "{}", a.body);
    assert_eq!(vl.request_count(), 3, "refused before VictoriaLogs");
}

/// Six failing queries against a VictoriaLogs answering `status`; returns the
/// statuses lokivl gave and the calls VictoriaLogs saw (threshold 5).
async fn six_queries(status: StatusCode) -> (Vec<u16>, usize) {
    let vl = fake_vl(vec![(
        "/select/logsql/query",
        Canned {
            status,
            body: "upstream gave up".to_owned(),
            delay: Duration::ZERO,
        },
    )])
    .await;
    let base =
        start_proxy(proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap()).await;
    let mut seen = Vec::new();
    for i in 0..6 {
        let url = format!(
            "{base}/loki/api/v1/query_range?{}",
            qs(&[
                ("query", &format!(r#"{{app="api"}} != "q{i}""#)),
                ("start", "1787389200000000000"),
                ("end", "1787392800000000000"),
            ])
        );
        seen.push(get_within(&url, &[], BOUND).await.unwrap().status.as_u16());
    }
    (seen, vl.requests().len())
}

#[tokio::test]
async fn gateway_timeouts_do_not_count_but_503s_do() {
    let (statuses, calls) = six_queries(StatusCode::GATEWAY_TIMEOUT).await;
    assert_eq!(statuses, [502; 6]);
    assert_eq!(calls, 6);
    let (statuses, calls) = six_queries(StatusCode::SERVICE_UNAVAILABLE).await;
    assert_eq!(statuses, [502, 502, 502, 502, 502, 503]);
    assert_eq!(calls, 5);
}

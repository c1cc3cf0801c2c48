//! Operational endpoints: buildinfo, readiness, metrics, unknown routes and
//! push.

use super::get_json;
use crate::common::client;

/// buildinfo, readiness, metrics, unknown routes and push.
pub(super) async fn check_operational(base: &str) {
    let got = get_json(base, "/loki/api/v1/status/buildinfo", &[]).await;
    assert!(
        got["version"].as_str().is_some_and(|v| v.starts_with("3.")),
        "{got}"
    );

    let (status, _, body) = client::get(&format!("{base}/ready"), &[])
        .await
        .expect("ready");
    assert_eq!(status, 200, "{body}");

    let (status, _, body) = client::get(&format!("{base}/metrics"), &[])
        .await
        .expect("metrics");
    assert_eq!(status, 200);
    assert!(
        body.contains("query_range"),
        "metrics name the route: {body}"
    );

    let (status, _, _) = client::get(&format!("{base}/loki/api/v1/nope"), &[])
        .await
        .expect("404");
    assert_eq!(status, 404);
    let (status, _, _) = client::post(
        &format!("{base}/loki/api/v1/push"),
        "application/json",
        b"{}".to_vec(),
    )
    .await
    .expect("push");
    assert_eq!(status, 405);
}

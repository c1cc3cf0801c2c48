//! Operational endpoints: buildinfo, readiness, metrics, unknown routes and
//! push.

use super::get_json;
use crate::support::client;

/// buildinfo, readiness, metrics, unknown routes and push.
pub(super) async fn check_operational(base: &str) {
    let got = get_json(base, "/loki/api/v1/status/buildinfo", &[]).await;
    assert!(
        got["version"].as_str().is_some_and(|v| v.starts_with("3.")),
        "{got}"
    );

    let (status, _, body) = client::try_get(&format!("{base}/ready"), &[])
        .await
        .map(client::Answer::parts)
        .expect("ready");
    assert_eq!(status, 200, "{body}");

    let (status, _, body) = client::try_get(&format!("{base}/metrics"), &[])
        .await
        .map(client::Answer::parts)
        .expect("metrics");
    assert_eq!(status, 200);
    assert!(
        body.contains("query_range"),
        "metrics name the route: {body}"
    );

    let (status, _, _) = client::try_get(&format!("{base}/loki/api/v1/nope"), &[])
        .await
        .map(client::Answer::parts)
        .expect("404");
    assert_eq!(status, 404);
    let (status, _, _) = client::try_post(
        &format!("{base}/loki/api/v1/push"),
        "application/json",
        b"{}".to_vec(),
    )
    .await
    .map(client::Answer::parts)
    .expect("push");
    assert_eq!(status, 405);
}

//! The series limit of metric answers, per router (the request context carries it).

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::StatusCode;

#[tokio::test]
async fn more_series_than_the_limit_is_lokis_error_not_a_cut() {
    let rows: String = (0..3)
        .map(|i| format!("{{\"_time\":\"1970-01-01T00:01:00.000000001Z\",\"app\":\"a{i}\",\"__lokivl_c\":\"1\"}}\n"))
        .collect();
    let vl = fake_vl_release(
        vec![("/select/logsql/query", Canned::ok(&rows))],
        PROBE_V126,
    )
    .await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.query_limits.max_query_series = 2;
    let base = start_proxy(settings).await;
    let u = format!(
        "{}/loki/api/v1/query?{}",
        base,
        qs(&[
            (
                "query",
                r#"sum by (app) (count_over_time({app=~"a.+"}[1m]))"#
            ),
            ("time", "120000000000")
        ])
    );
    let a = get(&u).await;
    let text = a.assert_error(StatusCode::BAD_REQUEST);
    assert_eq!(
        text.trim_end(),
        "maximum number of series (2) reached for a single query; consider reducing query cardinality by adding more specific stream selectors, reducing the time range, or aggregating results with functions like sum(), count() or topk()"
    );
}

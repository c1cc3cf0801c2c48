//! A `--backend` URL with `user:pass@`: the credentials are sent as basic
//! auth, and the password shows nowhere: not in error answers, `/ready`,
//! `/metrics`, the startup line, the access log, or a startup error.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::client::get;
use crate::support::client::qs;
use crate::support::lokivl::{run_captured, start_proxy};
use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use clap::Parser as _;
use http::StatusCode;

const SECRET: &str = "s3cr%2Ft";

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn query_url(base: &str) -> String {
    format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", "1787389200000000000"),
            ("end", "1787392800000000000"),
        ])
    )
}

fn settings(backend: &str) -> proxy::config::Settings {
    proxy::config::Config::try_parse_from(["lokivl", "--backend", backend])
        .unwrap()
        .validate()
        .unwrap()
}

#[tokio::test]
async fn url_credentials_are_basic_auth() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let app = Router::new()
        .route(
            "/select/logsql/{*rest}",
            post(
                |State(seen): State<Arc<Mutex<Vec<String>>>>, h: HeaderMap| async move {
                    let auth = h.get("authorization").map_or("-", |v| v.to_str().unwrap());
                    seen.lock().unwrap().push(auth.to_owned());
                    r#"{"values":[{"value":"app","hits":1}]}"#
                },
            ),
        )
        .with_state(Arc::clone(&seen));
    let addr = crate::support::fake_vl::FakeVl::serving(app).await.addr;
    let base = start_proxy(settings(&format!("http://vluser:{SECRET}@{addr}"))).await;
    let a = get(&format!("{base}/loki/api/v1/labels")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // base64("vluser:s3cr/t"): the password percent-decoded.
    assert_eq!(*seen.lock().unwrap(), ["Basic dmx1c2VyOnMzY3IvdA=="]);
}

#[tokio::test]
async fn errors_ready_and_metrics_never_show_the_password() {
    let port = closed_port();
    let base = start_proxy(settings(&format!(
        "http://vluser:{SECRET}@127.0.0.1:{port}"
    )))
    .await;
    let a = get(&query_url(&base)).await;
    assert_eq!(a.status, StatusCode::BAD_GATEWAY, "{}", a.body);
    assert!(
        a.body
            .starts_with(&format!("cannot reach VictoriaLogs at 127.0.0.1:{port}: ")),
        "{}",
        a.body
    );
    let ready = get(&format!("{base}/ready")).await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        ready.body.contains(&format!("127.0.0.1:{port}")),
        "{}",
        ready.body
    );
    let metrics = get(&format!("{base}/metrics")).await;
    for text in [&a.body, &ready.body, &metrics.body] {
        assert!(!text.contains("s3cr") && !text.contains("vluser"), "{text}");
    }
}

#[test]
fn the_startup_line_and_access_log_never_show_the_password() {
    let (listen, vl) = (closed_port(), closed_port());
    let backend = format!("http://vluser:{SECRET}@127.0.0.1:{vl}");
    let listen_arg = format!("127.0.0.1:{listen}");
    let (out, err) = run_captured(&["--listen", &listen_arg, "--backend", &backend], |_| {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let base = format!("http://127.0.0.1:{listen}");
            let began = Instant::now();
            // Poll until it listens; then one failing query for the access log.
            loop {
                if let Ok(a) = crate::support::client::try_get(&query_url(&base), &[]).await {
                    assert_eq!(a.status, StatusCode::BAD_GATEWAY);
                    break;
                }
                assert!(
                    began.elapsed() < Duration::from_secs(20),
                    "lokivl never listened"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    });
    let logs = format!("{out}{err}");
    assert!(logs.contains("lokivl listening"), "{logs}");
    assert!(logs.contains(&format!("http://127.0.0.1:{vl}")), "{logs}");
    assert!(logs.contains("/loki/api/v1/query_range"), "{logs}");
    assert!(!logs.contains("s3cr") && !logs.contains("vluser"), "{logs}");
}

#[test]
fn a_startup_error_masks_the_password() {
    let (out, err) = run_captured(
        &["--backend", &format!("ftp://vluser:{SECRET}@127.0.0.1:1")],
        |c| {
            let _ = c.wait();
        },
    );
    let logs = format!("{out}{err}");
    assert!(
        logs.contains(r#"invalid backend URL "ftp://vluser:xxxxx@127.0.0.1:1""#),
        "{logs}"
    );
    assert!(!logs.contains("s3cr"), "{logs}");
}

//! lokivl talking to an `https://` VictoriaLogs: trusted through
//! `--backend-tls-ca-file`, refused with a clear 502 without it, and with a
//! client certificate when the backend demands one.

use crate::support::client::get;
use crate::support::fake_vl::{Canned, FakeVl};
use crate::support::lokivl::start_proxy;
use crate::support::tls::Pki;
use crate::support::tls::pki;
use http::StatusCode;
use proxy::config::{Config, Settings};

const LABELS: &str = r#"{"values":[{"value":"app","hits":9},{"value":"env","hits":1}]}"#;

/// A fake VictoriaLogs over HTTPS with `pki`, answering the label-names
/// call; with `mtls` it demands a client certificate from `pki`'s CA.
async fn https_vl(pki: &Pki, mtls: bool) -> String {
    let b = FakeVl::builder()
        .answer("/select/logsql/stream_field_names", Canned::ok(LABELS))
        .answer("/health", Canned::ok("OK"));
    let b = if mtls { b.mtls(pki) } else { b.tls(pki) };
    b.start().await.addr
}

/// Settings from flags, the way an operator writes them.
fn settings(args: &[&str]) -> Settings {
    let mut argv = vec!["lokivl"];
    argv.extend_from_slice(args);
    Config::load(argv).unwrap().validate().unwrap()
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[tokio::test]
async fn https_backend_with_its_ca_works() {
    let pki = pki("tls-be-ok");
    let vl = https_vl(&pki, false).await;
    let s = settings(&[
        "--backend",
        &format!("https://{vl}"),
        "--backend-tls-ca-file",
        path(&pki.ca),
    ]);
    assert!(s.backend.https);
    let base = start_proxy(s).await;
    let a = get(&format!("{base}/loki/api/v1/labels")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // Flags give the binary's defaults: service_name discovery is on, as in Loki.
    assert_eq!(
        a.body,
        r#"{"status":"success","data":["app","env","service_name"]}"#
    );
    let ready = get(&format!("{base}/ready")).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
}

#[tokio::test]
async fn https_backend_without_its_ca_is_a_clear_502() {
    let pki = pki("tls-be-noca");
    let vl = https_vl(&pki, false).await;
    // Trusting some other CA: VictoriaLogs' certificate cannot be verified.
    let s = settings(&[
        "--backend",
        &format!("https://{vl}"),
        "--backend-tls-ca-file",
        path(&pki.other_ca),
    ]);
    let base = start_proxy(s).await;
    let a = get(&format!("{base}/loki/api/v1/labels")).await;
    let text = a.assert_error(StatusCode::BAD_GATEWAY);
    assert!(
        text.starts_with(&format!("cannot reach VictoriaLogs at {vl}")),
        "{text}"
    );
    assert!(text.contains("UnknownIssuer"), "{text}");
    assert!(text.contains("set --backend-tls-ca-file"), "{text}");
    // The system roots do not know the test CA either.
    let system = Settings::new(&format!("https://{vl}"));
    if let Ok(system) = system {
        let base = start_proxy(system).await;
        let a = get(&format!("{base}/loki/api/v1/labels")).await;
        assert_eq!(a.status, StatusCode::BAD_GATEWAY, "{}", a.body);
    }
}

#[tokio::test]
async fn insecure_skip_verify_accepts_an_unknown_ca() {
    let pki = pki("tls-be-skip");
    let vl = https_vl(&pki, false).await;
    let s = settings(&[
        "--backend",
        &format!("https://{vl}"),
        "--backend-tls-insecure-skip-verify",
    ]);
    let base = start_proxy(s).await;
    let a = get(&format!("{base}/loki/api/v1/labels")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

#[tokio::test]
async fn plain_http_to_a_tls_backend_fails_cleanly() {
    let pki = pki("tls-be-plain");
    let vl = https_vl(&pki, false).await;
    let base = start_proxy(Settings::new(&format!("http://{vl}")).unwrap()).await;
    let a = get(&format!("{base}/loki/api/v1/labels")).await;
    assert!(a.status.is_server_error(), "{} {}", a.status, a.body);
}

#[tokio::test]
async fn client_certificate_towards_the_backend() {
    let pki = pki("tls-be-mtls");
    let vl = https_vl(&pki, true).await;
    let with_cert = settings(&[
        "--backend",
        &format!("https://{vl}"),
        "--backend-tls-ca-file",
        path(&pki.ca),
        "--backend-tls-cert-file",
        path(&pki.client_cert),
        "--backend-tls-key-file",
        path(&pki.client_key),
    ]);
    let base = start_proxy(with_cert).await;
    let a = get(&format!("{base}/loki/api/v1/labels")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let without = settings(&[
        "--backend",
        &format!("https://{vl}"),
        "--backend-tls-ca-file",
        path(&pki.ca),
    ]);
    let base = start_proxy(without).await;
    let a = get(&format!("{base}/loki/api/v1/labels")).await;
    assert_eq!(a.status, StatusCode::BAD_GATEWAY, "{}", a.body);
}

#[test]
fn backend_tls_flags_are_checked_at_startup() {
    let err = Config::load(["lokivl", "--backend-tls-insecure-skip-verify"])
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(err.to_string().contains("https://"), "{err}");
    let err = Config::load([
        "lokivl",
        "--backend",
        "https://vl:9443",
        "--backend-tls-ca-file",
        "/nonexistent/ca.pem",
    ])
    .unwrap()
    .validate()
    .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
}

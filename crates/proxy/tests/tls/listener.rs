//! HTTPS on the API listener: `/ready` over TLS, mutual TLS refusing clients
//! without a certificate, graceful drain and the tail WebSocket upgrade over TLS.

use std::sync::Arc;
use std::time::Duration;

use crate::support::fake_vl::Canned;
use crate::support::fake_vl::fake_vl;
use crate::support::tls::Pki;
use crate::support::tls::client_config;
use crate::support::tls::https_get;
use crate::support::tls::pki;
use proxy::server::tls::{ListenerTlsFiles, server_config};

/// Starts lokivl over TLS in front of a fake VictoriaLogs answering `answers`;
/// returns the address and the shutdown trigger with the serve task.
async fn start(
    pki: &Pki,
    client_ca: bool,
    answers: Vec<(&str, Canned)>,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let vl = fake_vl(answers).await;
    let settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    let router = proxy::app::router(settings).unwrap();
    let config = server_config(&ListenerTlsFiles {
        cert_file: pki.server_cert.clone(),
        key_file: pki.server_key.clone(),
        client_ca_file: client_ca.then(|| pki.ca.clone()),
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(proxy::server::tls::serve(listener, config, router, async {
        let _ = rx.await;
    }));
    // Keep the fake backend alive for the whole test.
    std::mem::forget(vl);
    (addr, tx, task)
}

fn healthy() -> Vec<(&'static str, Canned)> {
    vec![("/health", Canned::ok("OK"))]
}

#[tokio::test]
async fn https_listener_serves_ready() {
    let pki = pki("tls-ready");
    let (addr, _stop, _task) = start(&pki, false, healthy()).await;
    let (status, body) = https_get(
        client_config(&pki.ca, None),
        &format!("https://{addr}/ready"),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!((status, body.as_str()), (200, "ready\n"));
    // The name in the certificate works too.
    let port = addr.rsplit(':').next().unwrap();
    let (status, _) = https_get(
        client_config(&pki.ca, None),
        &format!("https://localhost:{port}/ready"),
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!(status, 200);
    // A client that does not trust the CA refuses the server.
    let err = https_get(
        client_config(&pki.other_ca, None),
        &format!("https://{addr}/ready"),
    )
    .await
    .unwrap_err();
    assert!(err.contains("certificate"), "{err}");
    // Plain HTTP on the TLS port gets no HTTP answer.
    let plain = crate::support::client::try_get(&format!("http://{addr}/ready"), &[]).await;
    assert!(plain.is_err(), "{plain:?}");
}

#[tokio::test]
async fn client_certificate_is_required_with_a_client_ca() {
    let pki = pki("tls-mtls");
    let (addr, _stop, _task) = start(&pki, true, healthy()).await;
    let url = format!("https://{addr}/ready");
    let refused = https_get(client_config(&pki.ca, None), &url).await;
    assert!(
        refused.is_err(),
        "a client without a certificate must be refused: {refused:?}"
    );
    let (status, body) = https_get(
        client_config(&pki.ca, Some((&pki.client_cert, &pki.client_key))),
        &url,
    )
    .await
    .map(|a| (a.status.as_u16(), a.body))
    .unwrap();
    assert_eq!((status, body.as_str()), (200, "ready\n"));
}

#[tokio::test]
async fn client_certificate_from_another_ca_is_refused() {
    let pki = pki("tls-mtls-other");
    let other = crate::support::tls::pki("tls-mtls-other-2");
    let (addr, _stop, _task) = start(&pki, true, healthy()).await;
    // `other`'s client certificate is signed by a CA the listener does not trust.
    let refused = https_get(
        client_config(&pki.ca, Some((&other.client_cert, &other.client_key))),
        &format!("https://{addr}/ready"),
    )
    .await;
    assert!(refused.is_err(), "{refused:?}");
}

#[tokio::test]
async fn shutdown_drains_a_request_in_flight_over_tls() {
    let pki = pki("tls-drain");
    let slow = Canned {
        delay: Duration::from_millis(600),
        ..Canned::ok("OK")
    };
    let (addr, stop, task) = start(&pki, false, vec![("/health", slow)]).await;
    let url = format!("https://{addr}/ready");
    let config = client_config(&pki.ca, None);
    let inflight = tokio::spawn(async move { https_get(config, &url).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(()).unwrap();
    let a = inflight.await.unwrap().unwrap();
    let (status, body) = (a.status.as_u16(), a.body);
    assert_eq!((status, body.as_str()), (200, "ready\n"));
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("serve returns once drained")
        .unwrap()
        .unwrap();
    // The listener is closed afterwards.
    assert!(tokio::net::TcpStream::connect(&addr).await.is_err());
}

#[tokio::test]
async fn tail_websocket_upgrades_over_tls() {
    let pki = pki("tls-wss");
    let (addr, _stop, _task) = start(&pki, false, healthy()).await;
    let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_config(&pki.ca, None)));
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = connector.connect(name, tcp).await.unwrap();
    let url = format!(
        "wss://{addr}/loki/api/v1/tail?query={}",
        crate::support::client::qs(&[("q", r#"{app="api"}"#)])
            .trim_start_matches("q=")
            .to_owned()
    );
    let (ws, resp) = tokio_tungstenite::client_async(url, tls)
        .await
        .expect("the WebSocket upgrade succeeds over TLS");
    assert_eq!(resp.status(), 101);
    drop(ws);
}

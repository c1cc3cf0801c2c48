//! Shared harness of the end-to-end suites: real VictoriaLogs and Loki
//! processes, the recording/replaying tap, HTTP clients, datasets and the
//! differential comparison.
#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod backend;
pub mod checks;
pub mod client;
pub mod compare;
pub mod dataset;
pub mod differential;
pub mod loki;
pub mod otlp;
pub mod realistic;
pub mod suite_run;
pub mod variants;

/// Starts lokivl's router on a free loopback port, pointed at `backend`.
pub async fn start_lokivl(backend: &str) -> String {
    start_lokivl_with(backend, |_| {}).await
}

/// Like [`start_lokivl`], with `tune` applied to the settings first
/// (discovery, limits), served as the binary serves it.
pub async fn start_lokivl_with(
    backend: &str,
    tune: impl FnOnce(&mut proxy::config::Settings),
) -> String {
    let mut settings = proxy::config::Settings::new(backend).expect("valid settings");
    tune(&mut settings);
    let app = proxy::app::router(settings).expect("router builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind lokivl");
    let addr = listener.local_addr().expect("lokivl addr");
    tokio::spawn(proxy::app::serve(listener, app, std::future::pending()));
    format!("http://{addr}")
}

//! lokivl under test: in-process (its router on a free loopback port, in
//! the test's runtime) or as the built `lokivl` binary ([`Lokivl`], for
//! suites that need a process: command-line flags, peak memory, crashes).

pub mod process;

pub use process::{Lokivl, run_captured};

/// Starts lokivl with `settings` on a free loopback port, served by
/// `proxy::app::serve`; returns its base URL (`http://127.0.0.1:port`).
pub async fn start_proxy(settings: proxy::config::Settings) -> String {
    let router = proxy::app::router(settings).expect("router builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind lokivl");
    let addr = listener.local_addr().expect("lokivl addr");
    tokio::spawn(proxy::app::serve(listener, router, std::future::pending()));
    format!("http://{addr}")
}

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
    start_proxy(settings).await
}

/// lokivl in front of `backend`, served with `settings.server`'s connection
/// bounds as the binary does (`proxy::app::serve_with`); returns `host:port`.
pub async fn start_bounded(
    backend: &str,
    tune: impl FnOnce(&mut proxy::config::Settings),
) -> String {
    let mut settings = proxy::config::Settings::new(backend).unwrap();
    tune(&mut settings);
    let limits = settings.server;
    let app = proxy::app::router(settings).unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(proxy::app::serve_with(
        l,
        app,
        limits,
        std::future::pending(),
    ));
    format!("{addr}")
}

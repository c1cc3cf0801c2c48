//! The `lokivl` binary: parse flags, set up logging, serve until SIGINT/SIGTERM.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context as _;
use proxy::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

fn main() -> anyhow::Result<()> {
    let config = Config::load(std::env::args_os()).unwrap_or_else(|e| e.exit());
    let settings = config.validate().context("invalid configuration")?;
    let filter = EnvFilter::try_new(&settings.log_level).context("invalid --log-level")?;
    match settings.log_format {
        LogFormat::Text => tracing_subscriber::fmt().with_env_filter(filter).init(),
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init(),
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime.block_on(run(settings))
}

async fn run(settings: proxy::config::Settings) -> anyhow::Result<()> {
    let listen = settings.listen;
    let backend = settings.backend.base();
    let metrics_listen = settings.metrics_listen;
    let listener_tls = settings.listener_tls.clone();
    let conn_limits = settings.server;
    // The metric engine's series limit is still process-wide.
    let routers = proxy::app::routers(settings).context("building the router")?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    // One shutdown signal, observed by both listeners.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let admin = match (routers.admin, metrics_listen) {
        (Some(admin), Some(addr)) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding {addr}"))?;
            tracing::info!(%addr, "metrics listening");
            Some(tokio::spawn(proxy::app::serve_with(
                l,
                admin,
                conn_limits,
                stopped(stop_rx.clone()),
            )))
        }
        _ => None,
    };
    let scheme = if listener_tls.is_some() {
        "https"
    } else {
        "http"
    };
    tracing::info!(%listen, %scheme, %backend, "lokivl listening");
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    proxy::server::listen::serve(
        listener,
        routers.api,
        conn_limits,
        listener_tls,
        stopped(stop_rx),
    )
    .await
    .context("serving")?;
    if let Some(admin) = admin {
        let _ = admin.await;
    }
    tracing::info!("lokivl stopped");
    Ok(())
}

/// Completes on SIGINT or SIGTERM (container stop).
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("shutdown signal received, draining connections");
}

//! HTTPS on the API listener (`--tls-cert-file`, `--tls-key-file`) with
//! optional client-certificate authentication (`--tls-client-ca-file`).
//!
//! The serve loop mirrors [`crate::app::serve`]: the same hyper builder
//! (HTTP/1 with upgrades, so the tail WebSocket works over `wss://`), the
//! same head limits and the same graceful drain. The TLS handshake runs in
//! the connection's own task under a deadline, so a client that stalls in
//! the handshake never blocks `accept` or holds a slot for long.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::backend::tls::{TlsError, provider, read_certs, read_key, read_roots};

/// Request head buffer, as on the plain listener (Drilldown's long URLs).
const MAX_HEAD_BYTES: usize = 1024 * 1024;
/// Headers per request, as on the plain listener.
const MAX_HEADERS: usize = 256;
/// How long in-flight requests may finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// A TLS handshake slower than this is a stalled or hostile client.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The listener's certificate files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerTlsFiles {
    /// PEM certificate chain, leaf first.
    pub cert_file: PathBuf,
    /// PEM private key of the leaf.
    pub key_file: PathBuf,
    /// When set, clients must present a certificate signed by one of these CAs.
    pub client_ca_file: Option<PathBuf>,
}

/// Builds the listener's rustls config (read once at start-up; no reload).
///
/// # Errors
/// [`TlsError`] for unreadable files or a key that does not match the certificate.
pub fn server_config(files: &ListenerTlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = provider();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match &files.client_ca_file {
        Some(ca) => {
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(read_roots(ca)?), provider)
                    .build()
                    .map_err(|e| TlsError::Config(format!("--tls-client-ca-file: {e}")))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(read_certs(&files.cert_file)?, read_key(&files.key_file)?)
        .map_err(|e| TlsError::Config(format!("--tls-cert-file/--tls-key-file: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serves `router` over TLS on `listener` until `shutdown` completes, then drains connections.
///
/// # Errors
/// Never fails after binding; accept errors are logged and retried, failed handshakes logged at debug.
pub async fn serve(
    listener: TcpListener,
    config: Arc<ServerConfig>,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let acceptor = TlsAcceptor::from(config);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Typically EMFILE: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let acceptor = acceptor.clone();
                let router = router.clone();
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => tls,
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!(%peer, "TLS handshake timed out");
                            return;
                        }
                    };
                    let service = TowerToHyperService::new(router);
                    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
                    builder.http1().timer(TokioTimer::new()).max_buf_size(MAX_HEAD_BYTES).max_headers(MAX_HEADERS);
                    let conn = builder
                        .serve_connection_with_upgrades(TokioIo::new(tls), service)
                        .into_owned();
                    if let Err(e) = watcher.watch(conn).await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period");
    }
    Ok(())
}

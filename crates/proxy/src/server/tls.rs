//! HTTPS on the API listener (`--tls-cert-file`, `--tls-key-file`) with
//! optional client-certificate authentication (`--tls-client-ca-file`).
//!
//! The serve loop is the plain listener's ([`super::listen`]): the same
//! hyper builder (HTTP/1 with upgrades, so the tail WebSocket works over
//! `wss://`), the same head limits, connection bounds and graceful drain.
//! The TLS handshake runs in the connection's own task under a deadline,
//! so a client that stalls in the handshake never blocks `accept` or holds
//! a slot for long.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpListener;

use crate::backend::tls::{TlsError, provider, read_certs, read_key, read_roots};

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

/// Serves `router` over TLS on `listener` until `shutdown` completes, then
/// drains connections, under the default connection bounds.
///
/// # Errors
/// Never fails after binding; accept errors are logged and retried, failed handshakes logged at debug.
pub async fn serve(
    listener: TcpListener,
    config: Arc<ServerConfig>,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    super::listen::serve(
        listener,
        router,
        super::conn::ConnLimits::default(),
        Some(config),
        shutdown,
    )
    .await
}

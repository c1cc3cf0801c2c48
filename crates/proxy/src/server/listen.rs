//! The accept loop, one for the plain and the TLS listener.
//!
//! hyper is driven directly (not `axum::serve`) to raise the request-head
//! limits that long Grafana URLs need, and to put every connection under
//! the [`super::conn`] bounds.
//!
//! Past `--http-max-connections` the loop stops accepting: new connections
//! wait in the kernel's accept backlog (and their SYNs are retried by the
//! client past it) rather than being closed. Every connection lokivl holds
//! is bounded in time (head deadline, idle deadline, write stall deadline,
//! `query_timeout`, the tail's bounds), so a slot frees soon and a waiting
//! `/ready` probe is answered late rather than refused. A slot is held by
//! the socket itself, so an upgraded tail counts until it closes.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use super::conn::ConnLimits;
use super::conn::activity::Activity;
use super::conn::io::Watched;
use super::conn::service::Tracked;

/// Request head buffer: Drilldown's pipelines make GET URLs far longer than 8 KiB.
const MAX_HEAD_BYTES: usize = 1024 * 1024;
/// Headers per request; Grafana forwards many `X-*` headers.
const MAX_HEADERS: usize = 256;
/// How long in-flight requests may finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// A TLS handshake slower than this is a stalled or hostile client.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause after a failed accept (typically EMFILE) instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` (over TLS with `tls`) under `limits` until
/// `shutdown` completes, then drains connections for up to 30 s.
///
/// # Errors
/// Never fails after binding; accept errors are logged and retried, failed
/// handshakes logged at debug.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    tls: Option<Arc<rustls::ServerConfig>>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let acceptor = tls.map(TlsAcceptor::from);
    let slots =
        (limits.max_connections > 0).then(|| Arc::new(Semaphore::new(limits.max_connections)));
    // hyper-util's `auto` builder, HTTP/1 only: its upgradeable connections (the tail
    // WebSocket) can be drained by `GracefulShutdown`, plain http1 ones cannot.
    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        // The head and idle deadlines are `Watched`'s: hyper's would also cut idle keep-alives.
        .header_read_timeout(None)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let slot = match &slots {
            Some(s) => tokio::select! {
                p = Arc::clone(s).acquire_owned() => p.ok(),
                () = &mut shutdown => break,
            },
            None => None,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let activity = Activity::new();
        let io = Watched::new(stream, activity.clone(), limits, slot);
        let conn = Conn {
            builder: builder.clone(),
            router: router.clone(),
            activity,
            watcher: graceful.watcher(),
        };
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            match acceptor {
                None => conn.serve(io).await,
                Some(acceptor) => {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(io)).await {
                        Ok(Ok(tls)) => conn.serve(tls).await,
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
        });
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

/// What one accepted connection is served with.
struct Conn {
    builder: auto::Builder<TokioExecutor>,
    router: Router,
    activity: Activity,
    watcher: Watcher,
}

impl Conn {
    async fn serve<IO>(self, io: IO)
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let service = Tracked::new(TowerToHyperService::new(self.router), self.activity);
        let conn = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(io), service)
            .into_owned();
        if let Err(e) = self.watcher.watch(conn).await {
            tracing::debug!(error = %e, "connection ended with an error");
        }
    }
}

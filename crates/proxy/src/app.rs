//! The router (routes, shared state, metrics middleware) and the HTTP server loop.

use std::future::Future;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{any, get};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use crate::backend::Backend;
use crate::config::Settings;
use crate::handler::{AppState, metadata, query, status};
use crate::metrics::Metrics;

/// Request head buffer: Drilldown's pipelines make GET URLs far longer than 8 KiB.
const MAX_HEAD_BYTES: usize = 1024 * 1024;
/// Headers per request; Grafana forwards many `X-*` headers.
const MAX_HEADERS: usize = 256;
/// How long in-flight requests may finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Why the router could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A metric definition was rejected (a defect).
    #[error("registering metrics failed: {0}")]
    Metrics(#[from] prometheus::Error),
}

/// Builds every route with its shared state (backend pool, metrics).
///
/// # Errors
/// [`BuildError`] if the metrics registry cannot be built.
pub fn router(settings: Settings) -> Result<Router, BuildError> {
    let metrics = Metrics::new()?;
    let backend = Backend::new(settings.backend, settings.backend_timeout, metrics.clone());
    let state = AppState { backend, metrics };
    Ok(Router::new()
        .route(
            "/loki/api/v1/query_range",
            get(query::query_range).post(query::query_range),
        )
        .route("/loki/api/v1/query", get(query::query).post(query::query))
        .route(
            "/loki/api/v1/labels",
            get(metadata::labels).post(metadata::labels),
        )
        .route(
            "/loki/api/v1/label/{name}/values",
            get(metadata::label_values).post(metadata::label_values),
        )
        .route(
            "/loki/api/v1/series",
            get(metadata::series).post(metadata::series),
        )
        .route("/loki/api/v1/status/buildinfo", get(status::buildinfo))
        .route("/loki/api/v1/push", any(status::push))
        .route("/ready", get(status::ready))
        .route("/metrics", get(status::metrics))
        .fallback(status::not_found)
        .layer(middleware::from_fn_with_state(state.clone(), record))
        .with_state(state))
}

/// Counts every request by route template (never the raw path: label values would explode).
async fn record(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |m| m.as_str())
        .to_owned();
    let started = Instant::now();
    let resp = next.run(req).await;
    state
        .metrics
        .observe_request(&route, resp.status().as_u16(), started.elapsed());
    resp
}

/// Serves `router` on `listener` until `shutdown` completes, then drains connections.
///
/// hyper is driven directly (not `axum::serve`) to raise the request-head
/// limits that long Grafana URLs need.
///
/// # Errors
/// Never fails after binding; accept errors are logged and retried.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Typically EMFILE: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(router.clone());
                let mut builder = http1::Builder::new();
                builder.timer(TokioTimer::new()).max_buf_size(MAX_HEAD_BYTES).max_headers(MAX_HEADERS);
                // No `with_upgrades` yet: hyper-util 0.1 cannot drain upgradeable connections
                // gracefully; the websocket tail will need the `auto` builder.
                let conn = builder.serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
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

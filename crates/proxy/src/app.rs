//! The router (routes, shared state, the server layers) and the entry points of the HTTP server loop.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::handler::Handler as Handler_;
use axum::middleware;
use axum::routing::{MethodRouter, any, get};
use tokio::net::TcpListener;

use crate::backend::{Backend, BackendOptions};
use crate::config::Settings;
use crate::handler::{AppState, format_query, metadata, query, status};
use crate::handler::{detected, drilldown_limits, patterns, stats, volume};
use crate::limits::evaluations::Evaluations;
use crate::push::{self, PushState};
use crate::response_cache::{self, ResponseCache};
use crate::route::{Handler, Methods, ROUTES, Route};
use crate::server::conn::ConnLimits;
use crate::server::{headers, health, hit, observe, protect};
use crate::telemetry::Metrics;

/// Why the router could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A metric definition was rejected (a defect).
    #[error("registering metrics failed: {0}")]
    Metrics(#[from] prometheus::Error),
    /// The tenant map or default tenant is unusable.
    #[error("tenancy: {0}")]
    Tenant(#[from] crate::tenant::config::TenantConfigError),
}

/// The API router, and the admin router when `/metrics` has its own listener.
#[derive(Debug)]
pub struct Routers {
    /// Everything served on `--listen`.
    pub api: Router,
    /// `/metrics` (and `/health`) for `--metrics-listen`, when set.
    pub admin: Option<Router>,
}

/// Builds every route with its shared state (backend pool, metrics).
///
/// With `--metrics-listen` set, `/metrics` is left out; use [`routers`] to get it.
///
/// # Errors
/// [`BuildError`] if the metrics registry cannot be built.
pub fn router(settings: Settings) -> Result<Router, BuildError> {
    Ok(routers(settings)?.api)
}

/// Builds the API router and, with `--metrics-listen`, the separate admin router.
///
/// # Errors
/// [`BuildError`] if the metrics registry cannot be built.
pub fn routers(settings: Settings) -> Result<Routers, BuildError> {
    let metrics = Metrics::new()?;
    let tenants = settings.tenant.resolver()?;
    let tail_upstream =
        crate::tail::upstream::Upstream::new(settings.backend.clone(), &settings.backend_options);
    let options = BackendOptions {
        timeout: settings.backend_timeout,
        ..settings.backend_options
    };
    let backend = Backend::new(settings.backend, options, metrics.clone());
    let guard = protect::Guard::new(settings.limits.clone(), metrics.clone());
    let push_route = if settings.enable_push {
        any(push::push).with_state(PushState {
            backend: backend.clone(),
            max_body_bytes: settings.limits.max_body_bytes,
        })
    } else {
        any(status::push)
    };
    let tail_state = crate::tail::TailState {
        backend: backend.clone(),
        upstream: tail_upstream,
        settings: std::sync::Arc::new(settings.tail.clone()),
        slots: crate::tail::slots::Slots::default(),
    };
    let state = AppState {
        backend,
        log_queries: Evaluations::new(settings.limits.max_concurrent_log_queries, &metrics),
        metrics,
        work: settings.work,
        parser_pushdown: settings.parser_pushdown,
    };
    let separate_metrics = settings.metrics_listen.is_some();
    let admin = separate_metrics.then(|| {
        Router::new()
            .route("/metrics", get(status::metrics))
            .route("/health", get(health::health))
            .fallback(status::not_found)
            .layer(middleware::from_fn(headers::secure))
            .with_state(state.clone())
    });
    let drilldown_limits = drilldown_limits::LimitsConfig {
        query_timeout: settings.limits.query_timeout,
    };
    let mut api = Router::new();
    for r in ROUTES {
        let handler = match r.handler {
            Handler::QueryRange => methods(r, query::query_range),
            Handler::Query => methods(r, query::query),
            Handler::Labels => methods(r, metadata::labels),
            Handler::LabelValues => methods(r, metadata::label_values),
            Handler::Series => methods(r, metadata::series),
            Handler::FormatQuery => methods(r, format_query::format_query),
            Handler::BuildInfo => methods(r, status::buildinfo),
            Handler::IndexStats => methods(r, stats::index_stats),
            Handler::IndexVolume => methods(r, volume::volume),
            Handler::IndexVolumeRange => methods(r, volume::volume_range),
            Handler::DetectedLabels => methods(r, detected::detected_labels),
            Handler::DetectedFields => methods(r, detected::detected_fields),
            Handler::DetectedFieldValues => methods(r, detected::detected_field_values),
            Handler::Patterns => methods(r, patterns::patterns),
            Handler::DrilldownLimits => {
                get(drilldown_limits::drilldown_limits).with_state(drilldown_limits)
            }
            Handler::Tail => get(crate::handler::tail::tail).with_state(tail_state.clone()),
            Handler::Push => push_route.clone(),
            Handler::Ready => methods(r, status::ready),
            Handler::Health => methods(r, health::health),
            // With `--metrics-listen`, `/metrics` is on the admin listener only.
            Handler::Metrics if separate_metrics => continue,
            Handler::Metrics => methods(r, status::metrics),
        };
        api = api.route(r.path, handler);
    }
    let context_settings =
        crate::context::ContextSettings::new(settings.discovery.clone(), settings.query_limits);
    let response_cache = Arc::new(ResponseCache::new(
        settings.cache,
        context_settings.clone(),
        settings.shared_cache.as_ref(),
        state.metrics.clone(),
    ));
    let hit_path = hit::HitPath {
        cache: response_cache.clone(),
        tenants: tenants.clone(),
        guard: guard.clone(),
        metrics: state.metrics.clone(),
    };
    let api = api
        .fallback(status::not_found)
        // Inside the cache layer: a cache fill (which may run in another
        // task) builds its request context from the request it runs.
        .layer(middleware::from_fn_with_state(
            context_settings,
            crate::context::layer,
        ))
        .layer(middleware::from_fn_with_state(
            response_cache,
            response_cache::layer,
        ))
        .layer(middleware::from_fn_with_state(guard, protect::protect))
        // Outside `protect`, so rate limits are keyed by the mapped tenant.
        .layer(middleware::from_fn_with_state(
            tenants,
            crate::tenant::resolve,
        ))
        .layer(middleware::from_fn(headers::secure))
        .layer(middleware::from_fn_with_state(
            state.metrics.clone(),
            observe::observe,
        ))
        .with_state(state);
    // Hits are answered in front of the routed stack, which skips the
    // per-request service clones of every layer above (see `server::hit`).
    let api = Router::new().fallback_service(hit::Front::new(api, hit_path));
    Ok(Routers { api, admin })
}

/// The method router of `r` for `handler`, answering the methods the table names.
fn methods<H, T>(r: &Route, handler: H) -> MethodRouter<AppState>
where
    H: Handler_<T, AppState>,
    T: 'static,
{
    match r.methods {
        Methods::GetPost => get(handler.clone()).post(handler),
        Methods::Get => get(handler),
        Methods::Any => any(handler),
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then drains
/// connections, under the default connection bounds ([`ConnLimits::default`]).
///
/// The binary uses [`crate::server::listen::serve`] with the configured bounds.
///
/// # Errors
/// Never fails after binding; accept errors are logged and retried.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_with(listener, router, ConnLimits::default(), shutdown).await
}

/// [`serve`] under `limits` (`--http-*`).
///
/// # Errors
/// Never fails after binding; accept errors are logged and retried.
pub async fn serve_with(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    crate::server::listen::serve(listener, router, limits, None, shutdown).await
}

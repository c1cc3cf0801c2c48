//! HTTP handlers of the Loki API, one file per endpoint family.

mod bucketed;
pub mod detected;
pub mod drilldown_limits;
pub mod format_query;
pub mod metadata;
pub mod metric;
pub mod patterns;
pub mod query;
pub mod stats;
pub mod status;
pub mod tail;
pub mod volume;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};

use crate::backend::Backend;
use crate::telemetry::Metrics;

/// Shared state of every handler; cheap to clone (handles only).
#[derive(Debug, Clone)]
pub struct AppState {
    /// The VictoriaLogs client.
    pub backend: Backend,
    /// The proxy's own metrics.
    pub metrics: Metrics,
    /// Per-request bounds on rows read; each request takes fresh
    /// [`crate::work::Budgets`] from them.
    pub work: crate::work::WorkLimits,
    /// Whether parsers may run in VictoriaLogs behind an exactness guard
    /// (`--parser-pushdown`).
    pub parser_pushdown: bool,
    /// The slots log-query evaluations run in (`--max-concurrent-log-queries`).
    pub log_queries: crate::limits::evaluations::Evaluations,
}

/// A 200 answer with a JSON body already written.
pub fn json_response(body: Vec<u8>) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    resp
}

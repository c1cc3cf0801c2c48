//! Service endpoints: build info, readiness, metrics, and the refusals (push, unknown paths).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use super::{AppState, json_response};
use crate::backend::Endpoint;
use crate::error::{ApiError, text_response};

/// The Loki version lokivl reports. Grafana enables features such as
/// `categorize-labels` by version, so this is the Loki API level served, not lokivl's own version.
pub const LOKI_VERSION: &str = "3.7.0";

/// `GET /loki/api/v1/status/buildinfo`: a bare object, like Loki's.
pub async fn buildinfo() -> Response {
    let body = serde_json::json!({
        "version": LOKI_VERSION,
        "revision": concat!("lokivl-", env!("CARGO_PKG_VERSION")),
        "branch": "",
        "buildUser": "lokivl",
        "buildDate": "",
        "goVersion": "",
    });
    json_response(body.to_string().into_bytes())
}

/// `GET /ready`: ready only when VictoriaLogs answers its health check.
pub async fn ready(State(state): State<AppState>) -> Response {
    match state.backend.get(Endpoint::Health).await {
        Ok(_) => text_response(StatusCode::OK, "ready\n".to_owned()),
        Err(e) => text_response(StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {e}\n")),
    }
}

/// `GET /metrics`: Prometheus text format.
///
/// # Errors
/// [`ApiError::Internal`] if encoding fails.
pub async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let body = state
        .metrics
        .render()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut resp = body.into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    Ok(resp)
}

/// `/loki/api/v1/push`: lokivl is read-only.
pub async fn push() -> Response {
    text_response(
        StatusCode::METHOD_NOT_ALLOWED,
        "lokivl is read-only: push logs to VictoriaLogs directly".to_owned(),
    )
}

/// Any unknown path, with Go's `http.NotFound` text as Loki answers.
pub async fn not_found() -> Response {
    text_response(StatusCode::NOT_FOUND, "404 page not found\n".to_owned())
}

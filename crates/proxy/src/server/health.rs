//! `/health`: liveness of lokivl itself, independent of VictoriaLogs.
//!
//! `/ready` (VictoriaLogs reachable) is for load balancers; `/health` is for
//! restart decisions, so it must not fail just because the backend is down.

use axum::response::Response;
use http::StatusCode;

use crate::error::text_response;

/// `GET /health`: 200 `OK` while the process serves requests.
pub async fn health() -> Response {
    text_response(StatusCode::OK, "OK".to_owned())
}

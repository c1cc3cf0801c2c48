//! `/loki/api/v1/push` passthrough to VictoriaLogs' Loki ingestion (`--enable-push`).
//!
//! The body is forwarded unchanged with its `Content-Type` and
//! `Content-Encoding` (JSON, or protobuf+snappy as Promtail/Alloy send it):
//! VictoriaLogs' `/insert/loki/api/v1/push` understands both, so lokivl never
//! decodes it. The body is bounded by `--max-body-bytes`.
//!
//! In a VictoriaLogs cluster only vlinsert ingests: a vlselect started with
//! `-insert.disable` refuses the push with a 400, which Loki clients
//! (Promtail, Alloy) take as a bad batch and drop. lokivl answers that one
//! refusal with a 502 naming the cause instead, so clients keep the batch and
//! retry while the operator points pushes at vlinsert
//! (docs/compatibility.md, VictoriaLogs cluster).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, StatusCode, header};
use http_body_util::BodyExt;

use crate::backend::{Backend, Endpoint};
use crate::context::RequestContext;
use crate::error::{ApiError, text_response};

/// State of the push route.
#[derive(Debug, Clone)]
pub struct PushState {
    /// The VictoriaLogs client.
    pub backend: Backend,
    /// Largest body accepted.
    pub max_body_bytes: usize,
}

/// Headers forwarded as they came: they say how to read the body.
const PASSED: [HeaderName; 2] = [header::CONTENT_TYPE, header::CONTENT_ENCODING];

/// `POST /loki/api/v1/push` with push enabled.
pub async fn push(State(st): State<PushState>, req: Request) -> Response {
    match forward(&st, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn forward(st: &PushState, req: Request) -> Result<Response, ApiError> {
    if req.method() != http::Method::POST {
        return Ok(text_response(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed".to_owned(),
        ));
    }
    let (parts, body) = req.into_parts();
    let headers: Vec<(HeaderName, HeaderValue)> = PASSED
        .iter()
        .filter_map(|h| parts.headers.get(h).map(|v| (h.clone(), v.clone())))
        .collect();
    let limit = st.max_body_bytes;
    let body = http_body_util::Limited::new(body, limit)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                ApiError::PayloadTooLarge { limit }
            } else {
                ApiError::BadRequest(format!("cannot read the push body: {e}"))
            }
        })?
        .to_bytes();
    // The mapped tenant of the request (a push names exactly one).
    let ctx = parts
        .extensions
        .get::<RequestContext>()
        .ok_or_else(|| ApiError::Internal("a push without its request context".to_owned()))?;
    let Some(tenant) = ctx.single_tenant() else {
        return Err(ApiError::BadRequest(
            "a push writes to exactly one tenant (X-Scope-OrgID names several)".to_owned(),
        ));
    };
    let (status, content_type, answer) = st
        .backend
        .forward(tenant, Endpoint::Push, parts.uri.query(), &headers, body)
        .await?;
    if status == StatusCode::BAD_REQUEST && ingestion_disabled(&answer) {
        return Ok(text_response(
            StatusCode::BAD_GATEWAY,
            format!(
                "VictoriaLogs at the backend does not ingest ({}); send pushes to a vlinsert \
                 or to a node without -insert.disable",
                String::from_utf8_lossy(&answer).trim_end()
            ),
        ));
    }
    let mut resp = Response::new(Body::from(answer));
    *resp.status_mut() = status;
    if let Some(ct) = content_type {
        resp.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    Ok(resp)
}

/// Whether a VictoriaLogs 400 says the node does not ingest at all
/// (`-insert.disable`) rather than that the batch is bad.
fn ingestion_disabled(body: &[u8]) -> bool {
    body.starts_with(b"requests to /insert/") && body.windows(13).any(|w| w == b"are disabled ")
}

#[cfg(test)]
mod tests {
    use super::ingestion_disabled;

    #[test]
    fn only_a_disabled_insert_path_is_a_backend_refusal() {
        assert!(ingestion_disabled(
            b"requests to /insert/* are disabled with -insert.disable command-line flag\n"
        ));
        assert!(!ingestion_disabled(
            b"cannot parse Loki request: unexpected end of JSON input"
        ));
        assert!(!ingestion_disabled(
            b"requests to /select/* are disabled with -select.disable command-line flag"
        ));
    }
}

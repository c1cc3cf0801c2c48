//! The one error type of the request path and its mapping to Loki's error contract.
//!
//! Loki answers errors as `text/plain` with a fixed wording; Grafana shows the
//! text verbatim and retries split chunks only when it contains "timeout", so
//! both the status and the words matter. The mapping lives here and nowhere else.

use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use crate::backend::BackendError;

/// Where an error came from, for metrics and logs (pingora's `esource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The client sent something Loki would reject.
    Client,
    /// VictoriaLogs failed or answered something unusable.
    Upstream,
    /// A defect in lokivl.
    Internal,
}

/// Every way a request can fail, each mapped once to Loki's status and text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// A parameter or query Loki rejects with 400; the text is Loki's exact wording.
    #[error("{0}")]
    BadRequest(String),
    /// Valid LogQL that lokivl cannot answer yet (400, so Grafana shows the reason).
    #[error("{0}")]
    Unsupported(String),
    /// VictoriaLogs could not be reached at all.
    #[error("cannot reach VictoriaLogs at {authority}: {reason}")]
    BackendUnreachable {
        /// `host:port` of VictoriaLogs.
        authority: String,
        /// The connection error.
        reason: String,
    },
    /// VictoriaLogs did not answer within the configured deadline.
    #[error(
        "request to VictoriaLogs timeout after {0:?}; reduce the time range or add more specific stream selectors"
    )]
    BackendTimeout(Duration),
    /// VictoriaLogs rejected a query lokivl built (a lokivl defect, 500).
    #[error("VictoriaLogs rejected the query lokivl sent ({status}): {message}")]
    BackendRejected {
        /// VictoriaLogs' status code.
        status: StatusCode,
        /// VictoriaLogs' error text.
        message: String,
    },
    /// VictoriaLogs failed with a 5xx or an unreadable answer (502).
    #[error("VictoriaLogs failed ({status}): {message}")]
    BackendFailed {
        /// VictoriaLogs' status code (502 when the body itself was unusable).
        status: StatusCode,
        /// VictoriaLogs' error text or the decode error.
        message: String,
    },
    /// A defect in lokivl.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status Loki would use for this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::Unsupported(_) => StatusCode::BAD_REQUEST,
            Self::BackendUnreachable { .. } | Self::BackendFailed { .. } => StatusCode::BAD_GATEWAY,
            Self::BackendTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::BackendRejected { .. } | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Where the error came from.
    pub fn source_kind(&self) -> Source {
        match self {
            Self::BadRequest(_) | Self::Unsupported(_) => Source::Client,
            Self::BackendUnreachable { .. }
            | Self::BackendTimeout(_)
            | Self::BackendFailed { .. } => Source::Upstream,
            Self::BackendRejected { .. } | Self::Internal(_) => Source::Internal,
        }
    }
}

impl From<logql_parser::ParseError> for ApiError {
    fn from(e: logql_parser::ParseError) -> Self {
        Self::BadRequest(e.to_string())
    }
}

impl From<BackendError> for ApiError {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::Unreachable { authority, reason } => {
                Self::BackendUnreachable { authority, reason }
            }
            BackendError::Timeout(d) => Self::BackendTimeout(d),
            BackendError::Status { status, body } if status.is_client_error() => {
                Self::BackendRejected {
                    status,
                    message: body,
                }
            }
            BackendError::Status { status, body } => Self::BackendFailed {
                status,
                message: body,
            },
            BackendError::Body(reason) => Self::BackendFailed {
                status: StatusCode::BAD_GATEWAY,
                message: reason,
            },
            BackendError::Request(reason) => Self::Internal(reason),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match self.source_kind() {
            Source::Client => tracing::debug!(%status, error = %self, "request rejected"),
            Source::Upstream | Source::Internal => {
                tracing::warn!(%status, error = %self, "request failed")
            }
        }
        text_response(status, self.to_string())
    }
}

/// A Loki-style plain-text response (errors, `/ready`, 404).
///
/// Loki writes these with Go's `http.Error`, which appends a newline; so does lokivl.
pub fn text_response(status: StatusCode, mut body: String) -> Response {
    body.push('\n');
    let mut resp = (status, body).into_response();
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(
            ApiError::BadRequest("x".into()).status(),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            ApiError::from(BackendError::Timeout(Duration::from_secs(1))).status(),
            StatusCode::GATEWAY_TIMEOUT
        );
        let unreachable = ApiError::from(BackendError::Unreachable {
            authority: "127.0.0.1:1".into(),
            reason: "connection refused".into(),
        });
        assert_eq!(unreachable.status(), StatusCode::BAD_GATEWAY);
        assert!(unreachable.to_string().contains("VictoriaLogs"));
        assert!(!unreachable.to_string().contains("timeout"));
        let rejected = ApiError::from(BackendError::Status {
            status: StatusCode::BAD_REQUEST,
            body: "cannot parse query".into(),
        });
        assert_eq!(rejected.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(rejected.to_string().contains("cannot parse query"));
        let failed = ApiError::from(BackendError::Status {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: "overloaded".into(),
        });
        assert_eq!(failed.status(), StatusCode::BAD_GATEWAY);
    }

    #[test]
    fn timeout_text_says_timeout() {
        let e = ApiError::BackendTimeout(Duration::from_secs(60));
        assert!(e.to_string().contains("timeout"));
    }

    #[test]
    fn bad_request_is_verbatim_plain_text() {
        let resp = ApiError::BadRequest("limit must be a positive value".into()).into_response();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            resp.headers()[header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    }
}

//! The one error type of the request path and its mapping to Loki's error contract.
//!
//! Loki answers errors as `text/plain` with a fixed wording; Grafana shows the
//! text verbatim and retries split chunks only when it contains "timeout", so
//! both the status and the words matter. The mapping lives here and nowhere else.

use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use std::sync::Arc;

pub mod backend;

use self::backend::BackendError;
use crate::params::error::ParamError;
use engine::metric::EngineError;
use engine::work::Stopped;

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
///
/// Errors of the lower layers are kept whole ([`ApiError::Backend`],
/// [`ApiError::Param`], [`ApiError::Parse`], [`ApiError::Lower`],
/// [`ApiError::Engine`], [`ApiError::Json`]) and are the error's
/// [`std::error::Error::source`]; only their Loki text is derived here.
/// Where an error came from is [`ApiError::source_kind`], derived from
/// the variant (and, for VictoriaLogs, from its failure).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// A parameter or query Loki rejects with 400; the text is Loki's exact wording.
    #[error("{0}")]
    BadRequest(String),
    /// A request parameter Loki rejects with 400, in Loki's words.
    #[error("{0}")]
    Param(#[from] ParamError),
    /// LogQL that does not parse: 400 with Loki's parse error.
    #[error("{0}")]
    Parse(#[from] logql_parser::ParseError),
    /// Valid LogQL that lokivl cannot answer yet (400, so Grafana shows the reason).
    #[error("{0}")]
    Unsupported(String),
    /// LogQL the planner refuses rather than approximating: 400, as [`ApiError::Unsupported`].
    #[error("{0}")]
    Lower(#[from] logsql_ast::LowerError),
    /// A VictoriaLogs call failed; status and text follow [`backend_status`]
    /// and [`backend_text`].
    #[error("{}", backend_text(.0))]
    Backend(#[from] BackendError),
    /// VictoriaLogs answered something lokivl cannot read (502).
    #[error("VictoriaLogs failed ({status}): {message}")]
    BackendFailed {
        /// 502 (the body itself was unusable).
        status: StatusCode,
        /// The decode error.
        message: String,
    },
    /// The metric engine refused or failed ([`engine_status`] and [`engine_text`]).
    #[error("{}", engine_text(.0))]
    Engine(#[from] EngineError),
    /// The request ran past `--query-timeout` (Loki's `query_timeout`): 504 with Loki's text.
    ///
    /// Loki's sentence says "timed out"; the limit's name is appended so the text
    /// also contains "timeout", the word Grafana's query splitting retries on.
    #[error(
        "request timed out, decrease the duration of the request or add more label matchers (prefer exact match over regex match) to reduce the amount of data processed (query_timeout: {0:?})"
    )]
    QueryTimeout(Duration),
    /// Per-tenant rate limit or the global in-flight cap: 429 with Loki's queue-full text.
    #[error("too many outstanding requests")]
    TooManyRequests {
        /// The `Retry-After` hint.
        retry_after: Duration,
    },
    /// The request URL is longer than `--max-url-bytes`.
    #[error("request URL too long: {len} bytes, limit {limit} bytes")]
    UriTooLong {
        /// Length of the URL.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// The request headers are larger than `--max-header-bytes`.
    #[error("request headers too large: {len} bytes, limit {limit} bytes")]
    HeadersTooLarge {
        /// Size of the headers.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// The request body is larger than `--max-body-bytes`.
    #[error("request body too large: limit {limit} bytes")]
    PayloadTooLarge {
        /// The limit.
        limit: usize,
    },
    /// Writing an answer failed (a defect): 500.
    #[error("internal error: {0}")]
    Json(#[source] Arc<serde_json::Error>),
    /// A defect in lokivl.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The log and Drilldown engine's failures, in Loki's words: a refused
/// request is 400, a VictoriaLogs row the engine cannot read is 502, and a
/// spent deadline is Loki's query timeout.
impl From<engine::Error> for ApiError {
    fn from(e: engine::Error) -> Self {
        match e {
            engine::Error::BadRequest(m) => Self::BadRequest(m),
            engine::Error::Backend(m) => Self::BackendFailed {
                status: StatusCode::BAD_GATEWAY,
                message: m,
            },
            engine::Error::Stopped(s) => Self::QueryTimeout(s.0),
        }
    }
}

/// Work stopped at the request's deadline: Loki's `query_timeout` answer.
impl From<Stopped> for ApiError {
    fn from(s: Stopped) -> Self {
        Self::QueryTimeout(s.0)
    }
}

impl From<serde_json::Error> for ApiError {
    fn from(e: serde_json::Error) -> Self {
        Self::Json(Arc::new(e))
    }
}

/// Loki's text for a failed VictoriaLogs call.
///
/// A query VictoriaLogs timed out on says "timeout" (Grafana retries split
/// chunks on that word); refusals (breaker, queue) never do, or Grafana
/// would retry at once. An answer past `--backend-max-response-bytes` is
/// Loki's `max_query_bytes_read` refusal, which Grafana recognizes.
fn backend_text(e: &BackendError) -> String {
    match e {
        BackendError::Timeout(d) => format!(
            "request to VictoriaLogs timeout after {d:?}; reduce the time range or add more specific stream selectors"
        ),
        BackendError::Status { status, body } if status.is_client_error() => {
            format!("VictoriaLogs rejected the query lokivl sent ({status}): {body}")
        }
        BackendError::Status { status, body } => format!("VictoriaLogs failed ({status}): {body}"),
        BackendError::Body(reason) => {
            format!(
                "VictoriaLogs failed ({}): {reason}",
                StatusCode::BAD_GATEWAY
            )
        }
        BackendError::Request(reason) => format!("internal error: {reason}"),
        BackendError::TooLarge { limit, declared } => format!(
            "the query would read too many bytes (query: {}, limit: {}); consider adding more specific stream selectors or reduce the time range of the query",
            query_size(*declared, *limit),
            go::humanize::ibytes(*limit as u64)
        ),
        // Unreachable, Unsupported, CircuitOpen, Overloaded: their own text.
        other => other.to_string(),
    }
}

/// Loki's status for a failed VictoriaLogs call and where the fault lies.
fn backend_status(e: &BackendError) -> (StatusCode, Source) {
    match e {
        BackendError::Unreachable { .. } | BackendError::Body(_) => {
            (StatusCode::BAD_GATEWAY, Source::Upstream)
        }
        BackendError::Timeout(_) => (StatusCode::GATEWAY_TIMEOUT, Source::Upstream),
        // VictoriaLogs rejected a query lokivl built: a lokivl defect.
        BackendError::Status { status, .. } if status.is_client_error() => {
            (StatusCode::INTERNAL_SERVER_ERROR, Source::Internal)
        }
        BackendError::Status { .. } => (StatusCode::BAD_GATEWAY, Source::Upstream),
        BackendError::Request(_) => (StatusCode::INTERNAL_SERVER_ERROR, Source::Internal),
        // The query asked too much: never a 5xx.
        BackendError::TooLarge { .. } => (StatusCode::BAD_REQUEST, Source::Client),
        BackendError::Unsupported(_) => (StatusCode::BAD_REQUEST, Source::Client),
        BackendError::CircuitOpen { .. } | BackendError::Overloaded { .. } => {
            (StatusCode::SERVICE_UNAVAILABLE, Source::Upstream)
        }
    }
}

/// Loki's text for a metric engine failure.
fn engine_text(e: &EngineError) -> String {
    match e {
        EngineError::Backend(m) => format!("internal error: {m}"),
        EngineError::Stopped(s) => ApiError::QueryTimeout(s.0).to_string(),
        other => other.to_string(),
    }
}

/// Loki's status for a metric engine failure and where the fault lies.
fn engine_status(e: &EngineError) -> (StatusCode, Source) {
    match e {
        EngineError::Backend(_) => (StatusCode::INTERNAL_SERVER_ERROR, Source::Internal),
        EngineError::Stopped(_) => (StatusCode::GATEWAY_TIMEOUT, Source::Upstream),
        _ => (StatusCode::BAD_REQUEST, Source::Client),
    }
}

/// The size in the text of [`BackendError::TooLarge`]: the declared one, or "more than
/// the limit" when the answer was cut while streaming.
fn query_size(declared: Option<u64>, limit: usize) -> String {
    match declared {
        Some(n) => go::humanize::ibytes(n),
        None => format!("more than {}", go::humanize::ibytes(limit as u64)),
    }
}

/// Loki's text (and status 499) when the client went away before the answer.
pub const CANCELLED: &str = "the request was cancelled by the client";

/// nginx's non-standard status for a client that closed the request, as Loki uses it.
pub const STATUS_CLIENT_CLOSED: u16 = 499;

impl ApiError {
    /// The HTTP status Loki would use for this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_)
            | Self::Param(_)
            | Self::Parse(_)
            | Self::Unsupported(_)
            | Self::Lower(_) => StatusCode::BAD_REQUEST,
            Self::Backend(e) => backend_status(e).0,
            Self::Engine(e) => engine_status(e).0,
            Self::BackendFailed { .. } => StatusCode::BAD_GATEWAY,
            Self::Json(_) | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::QueryTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::UriTooLong { .. } => StatusCode::URI_TOO_LONG,
            Self::HeadersTooLarge { .. } => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }

    /// The `Retry-After` hint of refusals that clear by themselves.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Backend(
                BackendError::CircuitOpen { retry_after }
                | BackendError::Overloaded { retry_after },
            )
            | Self::TooManyRequests { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// Where the error came from.
    pub fn source_kind(&self) -> Source {
        match self {
            Self::BadRequest(_)
            | Self::Param(_)
            | Self::Parse(_)
            | Self::Unsupported(_)
            | Self::Lower(_)
            | Self::TooManyRequests { .. }
            | Self::UriTooLong { .. }
            | Self::HeadersTooLarge { .. }
            | Self::PayloadTooLarge { .. } => Source::Client,
            Self::Backend(e) => backend_status(e).1,
            Self::Engine(e) => engine_status(e).1,
            Self::BackendFailed { .. } | Self::QueryTimeout(_) => Source::Upstream,
            Self::Json(_) | Self::Internal(_) => Source::Internal,
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
        let retry_after = self.retry_after();
        let mut resp = text_response(status, self.to_string());
        if let Some(d) = retry_after {
            let mut buf = itoa::Buffer::new();
            if let Ok(v) = HeaderValue::from_str(buf.format(d.as_secs().max(1))) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        resp
    }
}

/// A Loki-style plain-text response (errors, `/ready`, 404).
///
/// The body is sent as given. Loki writes query errors with `fmt.Fprint`
/// (no trailing newline), while `/ready` and the 404 page go through Go's
/// `http.Error`, which appends one; callers of those add the newline.
pub fn text_response(status: StatusCode, body: String) -> Response {
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
        let e = ApiError::from(BackendError::Timeout(Duration::from_secs(60)));
        assert!(e.to_string().contains("timeout"));
    }

    #[test]
    fn refusals_carry_retry_after_and_loki_texts() {
        let open = ApiError::from(BackendError::CircuitOpen {
            retry_after: Duration::from_secs(3),
        });
        assert_eq!(open.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(!open.to_string().contains("timeout"));
        let resp = open.into_response();
        assert_eq!(resp.headers()[header::RETRY_AFTER], "3");
        let busy = ApiError::TooManyRequests {
            retry_after: Duration::from_millis(10),
        }
        .into_response();
        assert_eq!(busy.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(busy.headers()[header::RETRY_AFTER], "1");
        let t = ApiError::QueryTimeout(Duration::from_secs(60));
        assert!(t.to_string().starts_with("request timed out, decrease"));
        assert!(t.to_string().contains("timeout"));
        assert_eq!(t.status(), StatusCode::GATEWAY_TIMEOUT);
        let big = ApiError::from(BackendError::TooLarge {
            limit: 64 << 20,
            declared: None,
        });
        assert_eq!(big.status(), StatusCode::BAD_REQUEST);
        assert_eq!(big.source_kind(), Source::Client);
        assert_eq!(
            big.to_string(),
            "the query would read too many bytes (query: more than 64 MiB, limit: 64 MiB); consider adding more specific stream selectors or reduce the time range of the query"
        );
        let declared = ApiError::from(BackendError::TooLarge {
            limit: 1 << 20,
            declared: Some(49 << 20),
        });
        assert!(
            declared.to_string().starts_with(
                "the query would read too many bytes (query: 49 MiB, limit: 1.0 MiB);"
            ),
            "{declared}"
        );
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

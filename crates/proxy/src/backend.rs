//! The VictoriaLogs client: a pooled HTTP/1 connection pool with a deadline on every call.
//!
//! Queries are POSTed as form bodies so long LogsQL never hits URL limits.
//! Bodies are returned whole as [`BytesMut`] because the codec decodes in
//! place (simd-json needs `&mut [u8]`).

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use crate::config::BackendUrl;
use crate::metrics::{Metrics, Outcome};

/// How long an idle pooled connection is kept; VictoriaLogs closes idle ones after ~2 min.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Idle connections kept per host: enough for bursts from Grafana's split queries.
const POOL_MAX_IDLE: usize = 32;
/// A connect that takes longer than this means VictoriaLogs is down, not slow.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Error bodies are cut to this many bytes before reaching a client or a log.
const MAX_ERROR_BODY: usize = 4096;

/// VictoriaLogs endpoints lokivl calls; the name is also the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/select/logsql/query`: log entries as NDJSON.
    Query,
    /// `/select/logsql/stream_field_names`.
    StreamFieldNames,
    /// `/select/logsql/stream_field_values`.
    StreamFieldValues,
    /// `/select/logsql/streams`.
    Streams,
    /// `/health`.
    Health,
}

impl Endpoint {
    /// The path under the backend prefix.
    pub fn path(self) -> &'static str {
        match self {
            Self::Query => "/select/logsql/query",
            Self::StreamFieldNames => "/select/logsql/stream_field_names",
            Self::StreamFieldValues => "/select/logsql/stream_field_values",
            Self::Streams => "/select/logsql/streams",
            Self::Health => "/health",
        }
    }

    /// The metric label.
    pub fn name(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::StreamFieldNames => "stream_field_names",
            Self::StreamFieldValues => "stream_field_values",
            Self::Streams => "streams",
            Self::Health => "health",
        }
    }
}

/// Why a backend call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// Connecting failed (refused, reset, DNS).
    #[error("cannot reach VictoriaLogs at {authority}: {reason}")]
    Unreachable {
        /// `host:port`.
        authority: String,
        /// The connection error.
        reason: String,
    },
    /// The whole call took longer than the configured deadline.
    #[error("VictoriaLogs timeout after {0:?}")]
    Timeout(Duration),
    /// VictoriaLogs answered with a non-2xx status.
    #[error("VictoriaLogs answered {status}: {body}")]
    Status {
        /// The status.
        status: StatusCode,
        /// The (truncated) body, VictoriaLogs' error text.
        body: String,
    },
    /// The body broke off mid-way.
    #[error("reading the VictoriaLogs answer failed: {0}")]
    Body(String),
    /// The request could not even be built (a defect).
    #[error("building the VictoriaLogs request failed: {0}")]
    Request(String),
}

/// A cheap-to-clone handle on the pooled VictoriaLogs client.
#[derive(Debug, Clone)]
pub struct Backend {
    client: Client<HttpConnector, Full<Bytes>>,
    url: BackendUrl,
    timeout: Duration,
    metrics: Metrics,
}

impl Backend {
    /// Builds the pool; no connection is made until the first call.
    pub fn new(url: BackendUrl, timeout: Duration, metrics: Metrics) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT.min(timeout)));
        connector.set_nodelay(true);
        connector.enforce_http(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .pool_max_idle_per_host(POOL_MAX_IDLE)
            .build(connector);
        Self {
            client,
            url,
            timeout,
            metrics,
        }
    }

    /// POSTs `form` to `endpoint` and returns the whole 2xx body.
    ///
    /// # Errors
    /// [`BackendError`] on connection failure, deadline, non-2xx status or a broken body.
    pub async fn post_form(
        &self,
        endpoint: Endpoint,
        form: &[(&str, &str)],
    ) -> Result<BytesMut, BackendError> {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let req = Request::builder()
            .method(Method::POST)
            .uri(self.uri(endpoint))
            .header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            )
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| BackendError::Request(e.to_string()))?;
        self.call(endpoint, req).await
    }

    /// GETs `endpoint` (used for `/health`).
    ///
    /// # Errors
    /// As [`Backend::post_form`].
    pub async fn get(&self, endpoint: Endpoint) -> Result<BytesMut, BackendError> {
        let req = Request::builder()
            .method(Method::GET)
            .uri(self.uri(endpoint))
            .body(Full::new(Bytes::new()))
            .map_err(|e| BackendError::Request(e.to_string()))?;
        self.call(endpoint, req).await
    }

    fn uri(&self, endpoint: Endpoint) -> String {
        format!(
            "http://{}{}{}",
            self.url.authority,
            self.url.prefix,
            endpoint.path()
        )
    }

    async fn call(
        &self,
        endpoint: Endpoint,
        req: Request<Full<Bytes>>,
    ) -> Result<BytesMut, BackendError> {
        let started = Instant::now();
        let result = match tokio::time::timeout(self.timeout, self.exchange(req)).await {
            Ok(r) => r,
            Err(_) => Err(BackendError::Timeout(self.timeout)),
        };
        let outcome = match &result {
            Ok(_) => Outcome::Ok,
            Err(BackendError::Status { .. }) => Outcome::Status,
            Err(BackendError::Unreachable { .. } | BackendError::Request(_)) => {
                Outcome::Unreachable
            }
            Err(BackendError::Timeout(_)) => Outcome::Timeout,
            Err(BackendError::Body(_)) => Outcome::Body,
        };
        self.metrics
            .observe_backend(endpoint.name(), outcome, started.elapsed());
        result
    }

    async fn exchange(&self, req: Request<Full<Bytes>>) -> Result<BytesMut, BackendError> {
        let resp = self
            .client
            .request(req)
            .await
            .map_err(|e| BackendError::Unreachable {
                authority: self.url.authority.clone(),
                reason: error_chain(&e),
            })?;
        let status = resp.status();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| BackendError::Body(error_chain(&e)))?
            .to_bytes();
        if !status.is_success() {
            let cut = bytes.len().min(MAX_ERROR_BODY);
            let body = String::from_utf8_lossy(&bytes[..cut]).trim().to_owned();
            return Err(BackendError::Status { status, body });
        }
        // Unique owner after `collect`, so this is normally a move, not a copy.
        Ok(bytes
            .try_into_mut()
            .unwrap_or_else(|b| BytesMut::from(&b[..])))
    }
}

/// Joins an error and its sources: hyper's top-level messages alone ("client error (Connect)") say little.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_with_prefix() {
        let b = Backend::new(
            BackendUrl {
                authority: "vl:9428".into(),
                prefix: "/vl".into(),
            },
            Duration::from_secs(1),
            Metrics::new().unwrap(),
        );
        assert_eq!(
            b.uri(Endpoint::Query),
            "http://vl:9428/vl/select/logsql/query"
        );
        assert_eq!(b.uri(Endpoint::Health), "http://vl:9428/vl/health");
    }

    #[tokio::test]
    async fn unreachable_is_reported() {
        // Bind then drop a listener so the port is very likely closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let b = Backend::new(
            BackendUrl {
                authority: format!("127.0.0.1:{port}"),
                prefix: String::new(),
            },
            Duration::from_secs(2),
            Metrics::new().unwrap(),
        );
        let err = b.get(Endpoint::Health).await.unwrap_err();
        assert!(matches!(err, BackendError::Unreachable { .. }), "{err:?}");
    }
}

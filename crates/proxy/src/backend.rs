//! The VictoriaLogs client: a pooled HTTP/1 connection pool (plain or [`tls`]) with a deadline on every call.
//!
//! Queries are POSTed as form bodies so long LogsQL never hits URL limits.
//! Bodies are returned as mutable buffers because the codec decodes in
//! place (simd-json needs `&mut [u8]`); a byte limit bounds them. Small
//! answers are collected whole; NDJSON log answers are cut into
//! line-aligned segments as they stream ([`lines`]), so that a large one is
//! never held twice.
//!
//! Every call passes, in order: the circuit [`breaker`] (fail fast while
//! VictoriaLogs is down), the concurrency [`gate`] (bounded slots and queue),
//! then the deadline. Dropping the returned future (the client went away)
//! drops the connection to VictoriaLogs, which cancels the work there.

pub mod breaker;
pub mod dialect;
pub mod gate;
pub mod lines;
pub mod request;
pub mod stream;
pub mod tls;
pub mod url;
pub mod values;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use engine::ndjson::{Body, Segments};
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use self::url::BackendUrl;
use crate::telemetry::{Metrics, Outcome};
use crate::tenant::VlTenant;

use self::breaker::Breaker;
use self::dialect::{Dialect, OffsetRule};
use self::gate::Gate;
pub use self::request::{LogsQl, Request, Take};
pub use self::values::Hit;
pub use crate::error::backend::BackendError;

/// How long an idle pooled connection is kept; VictoriaLogs closes idle ones after ~2 min.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Idle connections kept per host: enough for bursts from Grafana's split queries.
const POOL_MAX_IDLE: usize = 32;
/// A connect that takes longer than this means VictoriaLogs is down, not slow.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Error bodies are cut to this many bytes before reaching a client or a log.
const MAX_ERROR_BODY: usize = 4096;

/// How a call's 2xx body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// Collected into one buffer (small answers: values, names, push).
    Whole,
    /// NDJSON cut into line-aligned segments as it streams ([`lines`]).
    Lines,
}

/// A call's 2xx body, as [`Read`] asked.
#[derive(Debug)]
enum Answer {
    Whole(BytesMut),
    Lines(Segments),
}

impl Answer {
    /// One buffer (a segmented answer is joined; only [`Read::Lines`] gives one).
    fn into_whole(self) -> BytesMut {
        match self {
            Self::Whole(b) => b,
            Self::Lines(s) => s.into_contiguous(),
        }
    }

    /// The answer for the NDJSON decoders.
    fn into_body(self) -> Body {
        match self {
            Self::Whole(b) => Body::Ndjson(b),
            Self::Lines(s) => Body::Segments(s),
        }
    }
}

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
    /// `/select/logsql/stats_query`: an instant stats pipe answer.
    StatsQuery,
    /// `/select/logsql/stats_query_range`: stats per step.
    StatsQueryRange,
    /// `/select/logsql/hits`: counts per time bucket.
    Hits,
    /// `/select/logsql/field_names`.
    FieldNames,
    /// `/select/logsql/field_values`.
    FieldValues,
    /// `/insert/loki/api/v1/push`: Loki push passthrough (only with `--enable-push`).
    Push,
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
            Self::StatsQuery => "/select/logsql/stats_query",
            Self::StatsQueryRange => "/select/logsql/stats_query_range",
            Self::Hits => "/select/logsql/hits",
            Self::FieldNames => "/select/logsql/field_names",
            Self::FieldValues => "/select/logsql/field_values",
            Self::Push => "/insert/loki/api/v1/push",
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
            Self::StatsQuery => "stats_query",
            Self::StatsQueryRange => "stats_query_range",
            Self::Hits => "hits",
            Self::FieldNames => "field_names",
            Self::FieldValues => "field_values",
            Self::Push => "push",
        }
    }
}

impl BackendError {
    /// Whether this failure of a call to `endpoint` says VictoriaLogs itself
    /// is unhealthy (counts towards the breaker, which is shared by every tenant).
    ///
    /// Only health signals count: a refused or broken connection, a 5xx, and
    /// a `/health` call that times out. A query that runs past the deadline
    /// (or a gateway's 504 for it) says the query is heavy, not that
    /// VictoriaLogs is down; counting it would let one tenant's slow queries
    /// open the breaker for everyone. A VictoriaLogs that accepts connections
    /// and then hangs is still bounded by the deadline and the backend gate,
    /// and `/ready` (a `/health` call) opens the breaker.
    fn is_backend_fault(&self, endpoint: Endpoint) -> bool {
        match self {
            Self::Unreachable { .. } | Self::Body(_) => true,
            Self::Timeout(_) => endpoint == Endpoint::Health,
            Self::Status { status, .. } => {
                status.is_server_error() && *status != StatusCode::GATEWAY_TIMEOUT
            }
            // A 4xx, an oversized answer or local refusals say nothing about its health.
            Self::Request(_)
            | Self::TooLarge { .. }
            | Self::CircuitOpen { .. }
            | Self::Overloaded { .. }
            | Self::Unsupported(_) => false,
        }
    }
}

/// How the client treats VictoriaLogs: deadline, bounds, breaker and credentials.
#[derive(Debug, Clone)]
pub struct BackendOptions {
    /// Deadline for one whole call (request plus body).
    pub timeout: Duration,
    /// Calls running at once.
    pub concurrency: usize,
    /// Calls waiting for a slot before new ones are refused.
    pub queue: usize,
    /// Largest answer body read; larger ones fail with [`BackendError::TooLarge`].
    pub max_response_bytes: usize,
    /// Consecutive failures that open the breaker (0 disables it).
    pub breaker_failures: u32,
    /// How long the breaker stays open before a probe.
    pub breaker_cooldown: Duration,
    /// `Authorization` header value sent on every call (basic or bearer), if any.
    pub authorization: Option<HeaderValue>,
    /// TLS settings for an `https://` backend ([`tls::client_config`]); unused for `http://`.
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// Tenants of one multi-tenant call asked at the same time (at least 1).
    pub fanout_parallelism: usize,
}

impl BackendOptions {
    /// The defaults with `timeout`: 64 slots, 256 waiting, 64 MiB answers,
    /// breaker 5 failures / 2 s, 4 tenants of a fan-out at once.
    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            timeout,
            concurrency: 64,
            queue: 256,
            max_response_bytes: 64 << 20,
            breaker_failures: 5,
            breaker_cooldown: Duration::from_secs(2),
            authorization: None,
            tls: None,
            fanout_parallelism: 4,
        }
    }
}

/// A cheap-to-clone handle on the pooled VictoriaLogs client: one shared
/// pointer, so a request clones one `Arc`.
#[derive(Debug, Clone)]
pub struct Backend(Arc<Pool>);

impl std::ops::Deref for Backend {
    type Target = Pool;

    fn deref(&self) -> &Pool {
        &self.0
    }
}

/// The client, bounds and state every [`Backend`] handle shares.
#[derive(Debug)]
pub struct Pool {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    url: BackendUrl,
    opts: BackendOptions,
    breaker: Breaker,
    gate: Gate,
    dialect: Dialect,
    metrics: Metrics,
}

impl Backend {
    /// Builds the pool; no connection is made until the first call.
    pub fn new(url: BackendUrl, opts: BackendOptions, metrics: Metrics) -> Self {
        let connector = connector(&opts, CONNECT_TIMEOUT.min(opts.timeout));
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .pool_max_idle_per_host(POOL_MAX_IDLE)
            .build(connector);
        Self(Arc::new(Pool {
            client,
            url,
            breaker: Breaker::new(opts.breaker_failures, opts.breaker_cooldown),
            gate: Gate::new(opts.concurrency, opts.queue),
            dialect: Dialect::default(),
            opts,
            metrics,
        }))
    }

    /// Tenants of one multi-tenant call asked at the same time ([`crate::tenant::fanout`]).
    pub fn fanout_parallelism(&self) -> usize {
        self.opts.fanout_parallelism.max(1)
    }

    /// The rule this VictoriaLogs follows for time-bucket offsets: as last
    /// seen, else probed now ([`dialect::PROBE`]), else the current releases'.
    ///
    /// The probe runs as `probe_as`, the request's (first) VictoriaLogs
    /// tenant: it needs one entry. Without one, the current releases' rule.
    pub async fn offset_rule(&self, probe_as: Option<VlTenant>) -> OffsetRule {
        if let Some(rule) = self.dialect.offset_rule() {
            return rule;
        }
        let _probing = self.dialect.probing().await;
        if let Some(rule) = self.dialect.offset_rule() {
            return rule;
        }
        let Some(tenant) = probe_as else {
            return OffsetRule::CURRENT;
        };
        match self
            .send_one(tenant, &Request::unbounded(dialect::PROBE))
            .await
        {
            Ok(body) => match dialect::rule_of_probe(&body) {
                Some(rule) => {
                    self.learn_offset_rule(rule);
                    return rule;
                }
                None => tracing::debug!("offset probe found no entry; probing again next time"),
            },
            Err(e) => tracing::debug!(error = %e, "offset probe failed; probing again next time"),
        }
        OffsetRule::CURRENT
    }

    /// Records the offset rule an answer showed (published in `/metrics`).
    pub fn learn_offset_rule(&self, rule: OffsetRule) {
        if self.dialect.learn_offset_rule(rule) {
            tracing::warn!(
                rule = rule.name(),
                "VictoriaLogs changed its time-bucket offset rule (upgraded in place?)"
            );
        }
        self.metrics.set_offset_rule(rule.name());
    }

    /// Whether the circuit breaker currently refuses calls.
    pub fn is_circuit_open(&self) -> bool {
        self.breaker.is_open()
    }

    /// Forwards a raw body (Loki push) with its content headers; returns status, content type and body.
    ///
    /// # Errors
    /// [`BackendError`] as for [`Backend::send_one`], except that non-2xx answers are returned, not errors.
    pub async fn forward(
        &self,
        tenant: VlTenant,
        endpoint: Endpoint,
        query: Option<&str>,
        headers: &[(header::HeaderName, HeaderValue)],
        body: Bytes,
    ) -> Result<(StatusCode, Option<HeaderValue>, Bytes), BackendError> {
        let mut uri = self.uri(endpoint);
        if let Some(q) = query.filter(|q| !q.is_empty()) {
            uri.push('?');
            uri.push_str(q);
        }
        let mut b = http::Request::builder().method(Method::POST).uri(uri);
        for (k, v) in headers {
            b = b.header(k, v);
        }
        let req = b
            .body(Full::new(body))
            .map_err(|e| BackendError::Request(e.to_string()))?;
        match self.call(Some(tenant), endpoint, req, Read::Whole).await {
            Ok(_) => Ok((StatusCode::NO_CONTENT, None, Bytes::new())),
            Err(BackendError::Status { status, body }) if status.is_client_error() => Ok((
                status,
                Some(HeaderValue::from_static("text/plain; charset=utf-8")),
                Bytes::from(body),
            )),
            Err(e) => Err(e),
        }
    }

    /// Sends `req` to one VictoriaLogs tenant and returns the whole 2xx body.
    ///
    /// Calls for a request's tenant (one or several) go through
    /// [`Backend::send_rows`] or [`Backend::send_values`]
    /// ([`crate::tenant::fanout`]).
    ///
    /// # Errors
    /// [`BackendError`] on connection failure, deadline, non-2xx status or a broken body.
    pub async fn send_one(
        &self,
        tenant: VlTenant,
        req: &Request,
    ) -> Result<BytesMut, BackendError> {
        let http = self.form_request(req)?;
        self.call(Some(tenant), req.endpoint, http, Read::Whole)
            .await
            .map(Answer::into_whole)
    }

    /// As [`Backend::send_one`] for an NDJSON answer (`/select/logsql/query`),
    /// read as it streams: cut at line ends into bounded segments and
    /// counted line by line ([`engine::ndjson::SegmentWriter`]), so a large
    /// answer is never held twice and one over `max_response_bytes` is
    /// refused as soon as it passes the bound.
    ///
    /// # Errors
    /// As [`Backend::send_one`].
    pub async fn send_ndjson(&self, tenant: VlTenant, req: &Request) -> Result<Body, BackendError> {
        let http = self.form_request(req)?;
        self.call(Some(tenant), req.endpoint, http, Read::Lines)
            .await
            .map(Answer::into_body)
    }

    /// The POST of `req` as a form body.
    fn form_request(&self, req: &Request) -> Result<http::Request<Full<Bytes>>, BackendError> {
        http::Request::builder()
            .method(Method::POST)
            .uri(self.uri(req.endpoint))
            .header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            )
            .body(Full::new(Bytes::from(req.form())))
            .map_err(|e| BackendError::Request(e.to_string()))
    }

    /// GETs `endpoint` (used for `/health`).
    ///
    /// # Errors
    /// As [`Backend::send_one`].
    pub async fn get(&self, endpoint: Endpoint) -> Result<BytesMut, BackendError> {
        let req = http::Request::builder()
            .method(Method::GET)
            .uri(self.uri(endpoint))
            .body(Full::new(Bytes::new()))
            .map_err(|e| BackendError::Request(e.to_string()))?;
        self.call(None, endpoint, req, Read::Whole)
            .await
            .map(Answer::into_whole)
    }

    fn uri(&self, endpoint: Endpoint) -> String {
        format!("{}{}", self.url.base(), endpoint.path())
    }

    /// One exchange; `tenant` is `None` only for `/health`, which holds no
    /// tenant data (every other call names its tenant: never VictoriaLogs'
    /// default by omission).
    async fn call(
        &self,
        tenant: Option<VlTenant>,
        endpoint: Endpoint,
        mut req: http::Request<Full<Bytes>>,
        read: Read,
    ) -> Result<Answer, BackendError> {
        let started = Instant::now();
        match tenant {
            Some(t) => crate::tenant::set_headers(req.headers_mut(), t),
            None if endpoint == Endpoint::Health => {}
            None => {
                return Err(BackendError::Request(
                    "internal error: a VictoriaLogs call was made without a tenant".into(),
                ));
            }
        }
        if let Some(auth) = &self.opts.authorization {
            req.headers_mut()
                .insert(header::AUTHORIZATION, auth.clone());
        }
        let result = self.guarded(endpoint, req, read).await;
        let outcome = match &result {
            Ok(_) => Outcome::Ok,
            Err(BackendError::Status { .. }) => Outcome::Status,
            Err(BackendError::Unreachable { .. } | BackendError::Request(_)) => {
                Outcome::Unreachable
            }
            Err(BackendError::Timeout(_)) => Outcome::Timeout,
            Err(BackendError::Body(_) | BackendError::TooLarge { .. }) => Outcome::Body,
            Err(
                BackendError::CircuitOpen { .. }
                | BackendError::Overloaded { .. }
                | BackendError::Unsupported(_),
            ) => Outcome::Refused,
        };
        self.metrics
            .observe_backend(endpoint.name(), outcome, started.elapsed());
        result
    }

    /// Breaker, then a gate slot, then the deadline-bound exchange.
    async fn guarded(
        &self,
        endpoint: Endpoint,
        req: http::Request<Full<Bytes>>,
        read: Read,
    ) -> Result<Answer, BackendError> {
        let was_open = self.breaker.is_open();
        let permit = self
            .breaker
            .admit()
            .map_err(|open| BackendError::CircuitOpen {
                retry_after: open.retry_after,
            })?;
        let slot = self
            .gate
            .enter()
            .await
            .map_err(|_| BackendError::Overloaded {
                retry_after: Duration::from_secs(1),
            })?;
        self.metrics.set_backend_load(
            self.gate.waiting(),
            self.gate.running(self.opts.concurrency),
        );
        let timeout = self.opts.timeout;
        let result = match tokio::time::timeout(timeout, self.exchange(req, read)).await {
            Ok(r) => r,
            Err(_) => Err(BackendError::Timeout(timeout)),
        };
        drop(slot);
        permit.record(!result.as_ref().is_err_and(|e| e.is_backend_fault(endpoint)));
        let is_open = self.breaker.is_open();
        if was_open && !is_open {
            // VictoriaLogs is back, perhaps another release: probe its rules again.
            self.dialect.forget();
        }
        self.metrics.set_breaker_open(is_open);
        result
    }

    async fn exchange(
        &self,
        req: http::Request<Full<Bytes>>,
        read: Read,
    ) -> Result<Answer, BackendError> {
        let resp = self.client.request(req).await.map_err(|e| {
            let mut reason = error_chain(&e);
            if let Some(hint) = tls::certificate_hint(&e) {
                reason.push_str(" (");
                reason.push_str(hint);
                reason.push(')');
            }
            BackendError::Unreachable {
                authority: self.url.authority.clone(),
                reason,
            }
        })?;
        let status = resp.status();
        let limit = self.opts.max_response_bytes;
        let declared = resp
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(BackendError::TooLarge { limit, declared });
        }
        if read == Read::Lines && status.is_success() {
            let declared = declared.and_then(|n| usize::try_from(n).ok());
            return lines::read(resp.into_body(), limit, declared)
                .await
                .map(Answer::Lines);
        }
        let bytes = http_body_util::Limited::new(resp.into_body(), limit)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    BackendError::TooLarge {
                        limit,
                        declared: None,
                    }
                } else {
                    BackendError::Body(error_chain(e.as_ref()))
                }
            })?
            .to_bytes();
        if !status.is_success() {
            let cut = bytes.len().min(MAX_ERROR_BODY);
            let body = String::from_utf8_lossy(&bytes[..cut]).trim().to_owned();
            return Err(BackendError::Status { status, body });
        }
        // Unique owner after `collect`, so this is normally a move, not a copy.
        Ok(Answer::Whole(
            bytes
                .try_into_mut()
                .unwrap_or_else(|b| BytesMut::from(&b[..])),
        ))
    }
}

/// The connector for `opts`: TLS when the backend URL is `https://`, plain TCP for `http://`.
///
/// Public so other VictoriaLogs clients (the live tail) connect the same way.
pub fn connector(
    opts: &BackendOptions,
    connect_timeout: Duration,
) -> HttpsConnector<HttpConnector> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(connect_timeout));
    http.set_nodelay(true);
    // The TLS layer below owns the scheme check.
    http.enforce_http(false);
    let config = opts.tls.clone().unwrap_or_else(tls::unused_client_config);
    hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(std::sync::Arc::unwrap_or_clone(config))
        .https_or_http()
        .enable_http1()
        .wrap_connector(http)
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
                https: false,
            },
            BackendOptions::with_timeout(Duration::from_secs(1)),
            Metrics::new().unwrap(),
        );
        assert_eq!(
            b.uri(Endpoint::Query),
            "http://vl:9428/vl/select/logsql/query"
        );
        assert_eq!(b.uri(Endpoint::Health), "http://vl:9428/vl/health");
    }

    #[test]
    fn only_health_signals_count_towards_the_breaker() {
        let status = |code: u16| BackendError::Status {
            status: StatusCode::from_u16(code).unwrap(),
            body: String::new(),
        };
        let unreachable = BackendError::Unreachable {
            authority: "vl:9428".into(),
            reason: "connection refused".into(),
        };
        let slow = BackendError::Timeout(Duration::from_secs(60));
        assert!(unreachable.is_backend_fault(Endpoint::Query));
        assert!(BackendError::Body("reset".into()).is_backend_fault(Endpoint::Query));
        assert!(status(500).is_backend_fault(Endpoint::Query));
        assert!(status(503).is_backend_fault(Endpoint::Streams));
        // A heavy query, or a gateway giving up on it, is not an outage.
        assert!(!slow.is_backend_fault(Endpoint::Query));
        assert!(!status(504).is_backend_fault(Endpoint::Query));
        assert!(!status(400).is_backend_fault(Endpoint::Query));
        // `/health` answers at once when VictoriaLogs is up.
        assert!(slow.is_backend_fault(Endpoint::Health));
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
                https: false,
            },
            BackendOptions::with_timeout(Duration::from_secs(2)),
            Metrics::new().unwrap(),
        );
        let err = b.get(Endpoint::Health).await.unwrap_err();
        assert!(matches!(err, BackendError::Unreachable { .. }), "{err:?}");
    }
}

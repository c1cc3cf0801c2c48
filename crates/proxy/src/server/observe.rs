//! Request ids, the access log and request metrics.
//!
//! One structured log line per request (`lokivl::access`): request id,
//! tenant, method, route template, status and duration. Headers and query
//! text are never logged: they may hold credentials or personal data. When
//! the client disconnects first, the handler future is dropped (which also
//! drops the call to VictoriaLogs); the drop is logged and counted as 499, as
//! Loki does.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method};

use crate::error::{CANCELLED, STATUS_CLIENT_CLOSED};
use crate::telemetry::Metrics;
use crate::tenant::Tenant;

/// The header carrying the request id both ways.
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// Longest client-sent request id reused as is.
const MAX_REQUEST_ID_LEN: usize = 128;

/// A request's id, in the request extensions for handlers that log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// Reuses a sane client id (a gateway's) or makes `<process prefix>-<counter>`.
fn request_id(headers: &HeaderMap) -> RequestId {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let sent = headers
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= MAX_REQUEST_ID_LEN
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        });
    if let Some(v) = sent {
        return RequestId(v.to_owned());
    }
    static PREFIX: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() ^ (d.as_secs() as u32))
    });
    // Written by hand: `format!` costs about as much as a whole cache hit's lookup.
    let mut id = String::with_capacity(8 + 1 + 16);
    push_hex(&mut id, u64::from(*prefix), 8);
    id.push('-');
    push_hex(&mut id, NEXT.fetch_add(1, Ordering::Relaxed), 1);
    RequestId(id)
}

/// Appends `v` in lower-case hex, zero-padded to at least `width` digits.
fn push_hex(out: &mut String, v: u64, width: u32) {
    let digits = (64 - v.leading_zeros()).div_ceil(4).max(width);
    for i in (0..digits).rev() {
        let nibble = (v >> (i * 4)) & 0xf;
        out.push(char::from(b"0123456789abcdef"[nibble as usize]));
    }
}

/// One request's access-log record: taken when it arrives, written once
/// when it is answered ([`Access::finish`]), or as a 499 if it is dropped
/// first. Shared by [`observe`] and the cache-hit front
/// ([`super::hit`]), so a hit is logged and counted like any request.
pub(crate) struct Access<'a> {
    metrics: &'a Metrics,
    id: RequestId,
    tenant: Tenant,
    method: Method,
    route: Cow<'static, str>,
    started: Instant,
    done: bool,
}

impl<'a> Access<'a> {
    /// Starts the record: the id (reused from the extensions when the
    /// cache-hit front already made one, or the client's, or a new one) and
    /// the raw tenant.
    pub(crate) fn start(
        metrics: &'a Metrics,
        req: &http::request::Parts,
        route: Cow<'static, str>,
        started: Instant,
    ) -> Self {
        let id = req
            .extensions
            .get::<RequestId>()
            .cloned()
            .unwrap_or_else(|| request_id(&req.headers));
        Self {
            metrics,
            id,
            tenant: Tenant::from_headers(&req.headers),
            method: req.method.clone(),
            route,
            started,
            done: false,
        }
    }

    /// The request's id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Hands the request on to another layer that logs it (no line from this record).
    pub(crate) fn hand_over(mut self) -> RequestId {
        self.done = true;
        std::mem::replace(&mut self.id, RequestId(String::new()))
    }

    /// Counts and logs the answer and sets `x-request-id` on it.
    pub(crate) fn finish(mut self, resp: &mut Response) {
        self.done = true;
        let status = resp.status().as_u16();
        let elapsed = self.started.elapsed();
        self.metrics.observe_request(&self.route, status, elapsed);
        tracing::info!(
            target: "lokivl::access",
            request_id = self.id.0.as_str(),
            tenant = self.tenant.as_str(),
            method = %self.method,
            route = &*self.route,
            status,
            duration_ms = elapsed.as_secs_f64() * 1e3,
            "request"
        );
        if let Ok(v) = HeaderValue::from_str(&self.id.0) {
            resp.headers_mut().insert(REQUEST_ID_HEADER, v);
        }
    }
}

impl Drop for Access<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let elapsed = self.started.elapsed();
        self.metrics
            .observe_request(&self.route, STATUS_CLIENT_CLOSED, elapsed);
        tracing::info!(
            target: "lokivl::access",
            request_id = self.id.0.as_str(),
            tenant = self.tenant.as_str(),
            method = %self.method,
            route = &*self.route,
            status = STATUS_CLIENT_CLOSED,
            duration_ms = elapsed.as_secs_f64() * 1e3,
            error = CANCELLED,
            "request"
        );
    }
}

/// The outermost layer: id, tenant, access log, metrics, 499 on drop.
pub async fn observe(State(metrics): State<Metrics>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |m| m.as_str())
        .to_owned();
    let (mut parts, body) = req.into_parts();
    let access = Access::start(&metrics, &parts, Cow::Owned(route), started);
    parts.extensions.insert(access.id().clone());
    parts.extensions.insert(access.tenant.clone());
    let mut resp = next.run(Request::from_parts(parts, body)).await;
    access.finish(&mut resp);
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_reused_only_when_sane() {
        let req = |v: &str| {
            http::Request::builder()
                .header(REQUEST_ID_HEADER, v)
                .body(axum::body::Body::empty())
                .unwrap()
        };
        assert_eq!(request_id(req("abc-123").headers()).0, "abc-123");
        let made = request_id(req("bad id!").headers());
        assert_ne!(made.0, "bad id!");
        let other = request_id(req(&"x".repeat(200)).headers());
        assert_ne!(made, other);
        assert!(other.0.len() < 40);
    }

    #[test]
    fn hex_ids_match_format() {
        for (v, w) in [
            (0u64, 8),
            (0, 1),
            (0xab, 1),
            (0xdead_beef, 8),
            (0x1f, 8),
            (u64::MAX, 1),
        ] {
            let mut s = String::new();
            push_hex(&mut s, v, w);
            assert_eq!(s, format!("{v:0width$x}", width = w as usize));
        }
    }
}

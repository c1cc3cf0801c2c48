//! Request ids, the access log and request metrics.
//!
//! One structured log line per request (`lokivl::access`): request id,
//! tenant, method, route template, status and duration. Headers and query
//! text are never logged: they may hold credentials or personal data. When
//! the client disconnects first, the handler future is dropped (which also
//! drops the call to VictoriaLogs); the drop is logged and counted as 499, as
//! Loki does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, Method};

use crate::error::{CANCELLED, STATUS_CLIENT_CLOSED};
use crate::metrics::Metrics;
use crate::tenant::Tenant;

/// The header carrying the request id both ways.
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// Longest client-sent request id reused as is.
const MAX_REQUEST_ID_LEN: usize = 128;

/// A request's id, in the request extensions for handlers that log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// Reuses a sane client id (a gateway's) or makes `<process prefix>-<counter>`.
fn request_id(req: &Request) -> RequestId {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let sent = req
        .headers()
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
    RequestId(format!(
        "{prefix:08x}-{:x}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Logs and counts a request that was dropped before answering.
struct Pending<'a> {
    metrics: &'a Metrics,
    id: &'a str,
    tenant: &'a str,
    method: &'a Method,
    route: &'a str,
    started: Instant,
    done: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let elapsed = self.started.elapsed();
        self.metrics
            .observe_request(self.route, STATUS_CLIENT_CLOSED, elapsed);
        tracing::info!(
            target: "lokivl::access",
            request_id = self.id,
            tenant = self.tenant,
            method = %self.method,
            route = self.route,
            status = STATUS_CLIENT_CLOSED,
            duration_ms = elapsed.as_secs_f64() * 1e3,
            error = CANCELLED,
            "request"
        );
    }
}

/// The outermost layer: id, tenant, access log, metrics, 499 on drop.
pub async fn observe(State(metrics): State<Metrics>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = request_id(&req);
    let tenant = Tenant::from_headers(req.headers());
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |m| m.as_str())
        .to_owned();
    let method = req.method().clone();
    req.extensions_mut().insert(id.clone());
    req.extensions_mut().insert(tenant.clone());
    let mut pending = Pending {
        metrics: &metrics,
        id: &id.0,
        tenant: tenant.as_str(),
        method: &method,
        route: &route,
        started,
        done: false,
    };
    let mut resp = next.run(req).await;
    pending.done = true;
    let status = resp.status().as_u16();
    let elapsed = started.elapsed();
    metrics.observe_request(&route, status, elapsed);
    tracing::info!(
        target: "lokivl::access",
        request_id = id.0.as_str(),
        tenant = tenant.as_str(),
        method = %method,
        route = route.as_str(),
        status,
        duration_ms = elapsed.as_secs_f64() * 1e3,
        "request"
    );
    if let Ok(v) = HeaderValue::from_str(&id.0) {
        resp.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
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
        assert_eq!(request_id(&req("abc-123")).0, "abc-123");
        let made = request_id(&req("bad id!"));
        assert_ne!(made.0, "bad id!");
        let other = request_id(&req(&"x".repeat(200)));
        assert_ne!(made, other);
        assert!(other.0.len() < 40);
    }
}

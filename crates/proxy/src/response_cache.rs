//! The response cache at the HTTP edge: identical in-flight requests share one
//! evaluation, and answers for closed time ranges are kept as final bytes.
//!
//! Grafana dashboards and Logs Drilldown send the same request from many
//! panels and users at once. This layer keys each cacheable request by
//! everything that can change its answer (tenant, response-shape flags,
//! credentials, query tags, route and the parameters, read as the handler
//! reads them: [`key`]), runs the handler once per key, and serves every
//! waiter the same bytes. The form body is read here once, with the
//! handler's bound, and the parsed form handed to the handler. Answers whose
//! range ended before the freshness margin are stored for the long TTL; the
//! live edge is only coalesced (or kept briefly, when configured), so late
//! data is never hidden for long. Errors are never stored; concurrent waiters
//! of a failing evaluation get the same error response.

mod key;
pub(crate) mod ttl;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cache::{Cache, CacheKey, Encoding, Fetched};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;

use crate::context::ContextSettings;
use crate::params::Form;
use crate::params::timestamp::now_ns;
use crate::route::{self, CachePolicy, Handler, Route};
use crate::telemetry::Metrics;
use crate::tenant::Tenant;
use crate::window::WindowContext;

/// Answers larger than this are served but not stored.
const MAX_STORED_BODY: usize = 32 * 1024 * 1024;

/// How the response cache behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSettings {
    /// Total bytes of stored answers and keys (`--cache-max-bytes`); 0 disables caching.
    pub max_bytes: u64,
    /// TTL of answers whose range ended before `now - freshness` (`--cache-ttl`).
    pub ttl: Duration,
    /// TTL of answers that touch the live edge (`--cache-live-ttl`); 0 only coalesces.
    pub live_ttl: Duration,
    /// How far behind now a range must end to count as closed (`--cache-freshness`).
    pub freshness: Duration,
    /// How log ranges are split into windows (`--split-queries-*`).
    pub windows: crate::window::WindowSettings,
}

impl CacheSettings {
    /// The TTL rule of these settings, shared by whole answers and windows.
    pub fn lifetimes(&self) -> cache::Lifetimes {
        cache::Lifetimes {
            ttl: self.ttl,
            live_ttl: self.live_ttl,
            freshness: self.freshness,
        }
    }
}

impl Default for CacheSettings {
    fn default() -> Self {
        Self {
            max_bytes: 256 << 20,
            ttl: Duration::from_secs(3600),
            live_ttl: Duration::ZERO,
            freshness: Duration::from_secs(600),
            windows: crate::window::WindowSettings::default(),
        }
    }
}

/// The shared response cache of one lokivl process.
#[derive(Clone)]
pub struct ResponseCache {
    cache: Cache,
    settings: CacheSettings,
    /// The discovery settings, part of every key ([`ContextSettings::cache_scope`]).
    context: ContextSettings,
    metrics: Metrics,
    waiting: Arc<Mutex<HashMap<CacheKey, Arc<Waiters>>>>,
}

/// The clients waiting for one evaluation. The evaluation runs detached (so
/// one client leaving does not fail the others) and is cancelled when the last
/// waiter is gone, as Loki cancels a query whose client disconnected.
struct Waiters {
    count: AtomicUsize,
    cancel: tokio::sync::watch::Sender<bool>,
}

/// One client's place among the waiters of a key; leaving is counted on drop.
struct Waiting {
    key: CacheKey,
    waiters: Arc<Waiters>,
    map: Arc<Mutex<HashMap<CacheKey, Arc<Waiters>>>>,
}

impl Waiting {
    fn join(map: &Arc<Mutex<HashMap<CacheKey, Arc<Waiters>>>>, key: &CacheKey) -> Self {
        let mut guard = map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let waiters = guard
            .entry(key.clone())
            .or_insert_with(|| {
                Arc::new(Waiters {
                    count: AtomicUsize::new(0),
                    cancel: tokio::sync::watch::Sender::new(false),
                })
            })
            .clone();
        waiters.count.fetch_add(1, Ordering::SeqCst);
        Self {
            key: key.clone(),
            waiters,
            map: map.clone(),
        }
    }

    fn cancelled(&self) -> tokio::sync::watch::Receiver<bool> {
        self.waiters.cancel.subscribe()
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut guard = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.waiters.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.waiters.cancel.send_replace(true);
            if guard
                .get(&self.key)
                .is_some_and(|w| Arc::ptr_eq(w, &self.waiters))
            {
                guard.remove(&self.key);
            }
        }
    }
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl ResponseCache {
    /// Creates the cache with its byte bound, keyed under the request
    /// settings `context` (their discovery flags change answers), backed by
    /// `shared` when replicas share a cache tier (`--shared-cache`).
    pub fn new(
        settings: CacheSettings,
        context: ContextSettings,
        shared: Option<&cache::SharedConfig>,
        metrics: Metrics,
    ) -> Self {
        let mut cache = Cache::new(cache::Settings {
            max_bytes: settings.max_bytes,
        });
        if let Some(config) = shared.filter(|_| settings.max_bytes > 0) {
            cache = cache.with_shared(cache::SharedTier::memcached(config, settings.lifetimes()));
            metrics.register_shared_cache(cache.clone());
        }
        Self {
            cache,
            settings,
            context,
            metrics,
            waiting: Arc::default(),
        }
    }

    /// The underlying cache, for statistics.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// What the log-range window walk needs: split settings and this cache.
    pub fn window_context(&self) -> WindowContext {
        WindowContext {
            settings: self.settings.windows,
            cache: (self.settings.max_bytes > 0).then(|| self.cache.clone()),
            lifetimes: self.settings.lifetimes(),
            metrics: self.metrics.clone(),
        }
    }
}

/// A non-cacheable answer, shared with every waiter of the same evaluation.
#[derive(Debug, thiserror::Error)]
#[error("uncacheable answer with status {status}")]
struct Uncacheable {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Uncacheable {
    fn to_response(&self) -> Response {
        let mut resp = Response::new(Body::from(self.body.clone()));
        *resp.status_mut() = self.status;
        *resp.headers_mut() = self.headers.clone();
        resp
    }
}

/// The key text of a metadata request: its parameters without `start`,
/// `end` and `since`, plus the range widened to its bucket (as the handler
/// fetches it), and that range's end. `None` when the range does not parse
/// (the handler answers the error).
fn metadata_request(form: &Form, now: i64) -> Option<(String, i64)> {
    let b = crate::window::bucket::widen(crate::params::bounds(form, now).ok()?);
    let mut ser = key::decoded_params(form.pairs(), |k| matches!(k, "start" | "end" | "since"));
    ser.append_pair("bucket", &format!("{}-{}", b.start, b.end));
    Some((ser.finish(), b.end))
}

/// The full key: tenant and discovery scope, response-shape flags,
/// credentials, route and request text (the parameters, then the query tags).
fn key_of(scope: String, headers: &HeaderMap, path: &str, params: &str) -> CacheKey {
    CacheKey::new(
        scope,
        Encoding::Identity,
        key::shape_flags(headers),
        crate::context::credentials(headers),
        path,
        key::join_tags(params, headers),
    )
}

impl ResponseCache {
    /// Whether a `GET` to `path` can be answered by [`Self::stored_get`]:
    /// caching is on and the route is cached under its raw parameters
    /// ([`CachePolicy::Raw`]). Returns the route.
    pub(crate) fn plain_get_route(&self, method: &Method, path: &str) -> Option<&'static Route> {
        if self.settings.max_bytes == 0 || method != Method::GET {
            return None;
        }
        route::cached(path).filter(|r| r.cache == CachePolicy::Raw)
    }

    /// The stored answer of a `GET` for `tenant` ([`Tenant::cache_key`]), keyed
    /// exactly as [`layer`] keys it, or `None` when nothing is stored. Used
    /// by the cache-hit front, which answers hits before the inner layers.
    pub(crate) async fn stored_get(
        &self,
        tenant: &str,
        uri: &http::Uri,
        headers: &HeaderMap,
    ) -> Option<Bytes> {
        let params = key::params_text(uri.query(), b"", || Form::parse(uri.query(), b""));
        let key = key_of(
            self.context.cache_scope(tenant),
            headers,
            uri.path(),
            &params,
        );
        self.cache.get(&key).await
    }

    /// The answer to a hit on `endpoint`: the stored bytes as they are, counted.
    pub(crate) fn hit_answer(&self, endpoint: &str, body: Bytes) -> Response {
        self.metrics.observe_cache(endpoint, "hit");
        json_answer(body)
    }
}

fn json_answer(body: Bytes) -> Response {
    let mut resp = Response::new(Body::from(body));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    resp
}

/// The middleware: serves cacheable routes through the cache, others untouched.
pub async fn layer(State(rc): State<Arc<ResponseCache>>, mut req: Request, next: Next) -> Response {
    let Some(route) = route::cached(req.uri().path()) else {
        return next.run(req).await;
    };
    let endpoint = route.name;
    if rc.settings.max_bytes == 0 || !matches!(*req.method(), Method::GET | Method::POST) {
        if route.handler == Handler::QueryRange {
            req.extensions_mut().insert(rc.window_context());
        }
        return next.run(req).await;
    }
    let (mut parts, body) = req.into_parts();
    // The body is read once, with the handler's bound, and only when the
    // handler reads it; the handler gets the same parsed form (see `Form`).
    let body = if crate::params::form::reads_body(&parts.method, &parts.headers) {
        match crate::params::form::read_body(body).await {
            Ok(bytes) => bytes,
            Err(e) => return e.into_response(),
        }
    } else {
        Bytes::new()
    };
    let parse = || Form::parse(parts.uri.query(), &body);

    let now = now_ns();
    // Metadata is keyed (and fetched) by its widened time bucket, so refreshes
    // share an entry; that needs the decoded range. Other routes are keyed by
    // their raw parameters: no decoding before the lookup.
    let metadata = route.cache == CachePolicy::Bucketed;
    let (form, bucketed) = if metadata {
        let form = parse();
        let bucketed = metadata_request(&form, now);
        (Some(form), bucketed)
    } else {
        (None, None)
    };
    let key = {
        let tenant = parts.extensions.get::<Tenant>().map_or_else(
            || {
                rc.context
                    .cache_scope(Tenant::from_headers(&parts.headers).as_str())
            },
            |t| rc.context.cache_scope(&t.cache_key()),
        );
        let params = match &bucketed {
            Some((text, _)) => Cow::Borrowed(text.as_str()),
            None => Cow::Owned(key::params_text(parts.uri.query(), &body, parse)),
        };
        key_of(tenant, &parts.headers, parts.uri.path(), &params)
    };
    // The hit path: stored bytes, nothing else.
    if let Some(body) = rc.cache.get(&key).await {
        return rc.hit_answer(endpoint, body);
    }

    let form = form.unwrap_or_else(parse);
    let ttl = match &bucketed {
        Some((_, end)) => ttl::ttl_after(*end, &rc.settings, now),
        None => ttl::ttl_for(endpoint, &form, &rc.settings, now),
    };
    if route.handler == Handler::QueryRange {
        // The handler splits log ranges into windows cached here too.
        parts.extensions.insert(rc.window_context());
    }
    // The handler reads exactly the parameters keyed here.
    parts.extensions.insert(form);

    let req = Request::from_parts(parts, Body::from(body));
    let waiting = Waiting::join(&rc.waiting, &key);
    let mut cancelled = waiting.cancelled();
    let fill = async move {
        let resp = tokio::select! {
            resp = next.run(req) => resp,
            _ = cancelled.wait_for(|c| *c) => {
                // Every client left: stop the backend work, keep nothing.
                return Err(Uncacheable {
                    status: StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
                    headers: HeaderMap::new(),
                    body: Bytes::from_static(b"the request was cancelled by the client"),
                });
            }
        };
        let (parts, body) = resp.into_parts();
        let bytes = body
            .collect()
            .await
            .map(http_body_util::Collected::to_bytes)
            .unwrap_or_default();
        if parts.status == StatusCode::OK && bytes.len() <= MAX_STORED_BODY {
            Ok(Fetched::new(bytes, ttl))
        } else {
            Err(Uncacheable {
                status: parts.status,
                headers: parts.headers,
                body: bytes,
            })
        }
    };
    // The fill may run in another task: the request it runs carries its
    // tenant in the extensions, and the context layer inside builds the
    // request context from it.
    // The TTL is known before the fill: a live-edge answer skips the
    // shared tier, where only closed answers are kept.
    let result = rc.cache.get_or_fetch_expecting(key, Some(ttl), fill).await;
    drop(waiting);
    let stats = rc.cache.stats();
    rc.metrics
        .set_cache_state(stats.weighted_bytes, stats.entries, stats.evictions);
    match result {
        Ok(lookup) => {
            rc.metrics
                .observe_cache(endpoint, crate::telemetry::cache_outcome(lookup.outcome));
            json_answer(lookup.body)
        }
        Err(cache::Error::Fetch(e)) => {
            rc.metrics.observe_cache(endpoint, "uncacheable");
            e.to_response()
        }
        Err(e) => {
            rc.metrics.observe_cache(endpoint, "failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal error: {e}"),
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(path: &str) -> Option<&'static str> {
        route::cached(path).map(|r| r.name)
    }

    #[test]
    fn only_query_and_metadata_routes_are_cached() {
        assert_eq!(endpoint("/loki/api/v1/query_range"), Some("query_range"));
        assert_eq!(
            endpoint("/loki/api/v1/label/app/values"),
            Some("label_values")
        );
        assert_eq!(
            endpoint("/loki/api/v1/detected_field/level/values"),
            Some("detected_field_values")
        );
        assert_eq!(endpoint("/loki/api/v1/push"), None);
        assert_eq!(endpoint("/loki/api/v1/tail"), None);
        assert_eq!(endpoint("/loki/api/v1/format_query"), None);
        assert_eq!(endpoint("/metrics"), None);
    }

    #[test]
    fn metadata_refreshes_within_a_bucket_share_a_key() {
        let t0: i64 = 1_736_899_200_000_000_000;
        let now = t0 + 100 * 3_600_000_000_000;
        let pairs = |start: i64, end: i64| {
            Form::from_pairs([
                ("end", end.to_string()),
                ("query", "{app=\"a\"}".to_owned()),
                ("start", start.to_string()),
            ])
        };
        let minute = 60_000_000_000;
        let a = metadata_request(&pairs(t0 + minute, t0 + 3_600_000_000_000 + minute), now);
        let b = metadata_request(
            &pairs(t0 + 2 * minute, t0 + 3_600_000_000_000 + 2 * minute),
            now,
        );
        assert_eq!(a, b);
        let c = metadata_request(
            &pairs(t0 + 6 * minute, t0 + 3_600_000_000_000 + 6 * minute),
            now,
        );
        assert_ne!(a, c);
        let (text, end) = a.unwrap_or_default();
        assert_eq!(end, t0 + 3_600_000_000_000 + 5 * minute);
        assert!(
            text.contains("query=") && !text.contains("start="),
            "{text}"
        );
        // Unparseable bounds: no bucket, the handler reports the error.
        assert_eq!(
            metadata_request(&Form::from_pairs([("start", "x")]), now),
            None
        );
        // The first `end` is the one the handler reads: `end=late&end=early`
        // is not `end=early&end=late`.
        let late = t0 + 3_600_000_000_000 + 20 * minute;
        let early = t0 + 3_600_000_000_000 + minute;
        let two = |x: i64, y: i64| {
            Form::from_pairs([
                ("start", t0.to_string()),
                ("end", x.to_string()),
                ("end", y.to_string()),
            ])
        };
        let (late_first, late_end) = metadata_request(&two(late, early), now).unwrap();
        let (early_first, early_end) = metadata_request(&two(early, late), now).unwrap();
        assert_ne!(late_first, early_first);
        assert!(late_end > early_end);
    }
}

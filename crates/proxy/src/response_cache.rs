//! The response cache at the HTTP edge: identical in-flight requests share one
//! evaluation, and answers for closed time ranges are kept as final bytes.
//!
//! Grafana dashboards and Logs Drilldown send the same request from many
//! panels and users at once. This layer keys each cacheable request by
//! everything that can change its answer (tenant, response-shape flags,
//! credentials, query tags, route and the normalised parameters), runs the
//! handler once per key, and serves every waiter the same bytes. Answers whose
//! range ended before the freshness margin are stored for the long TTL; the
//! live edge is only coalesced (or kept briefly, when configured), so late
//! data is never hidden for long. Errors are never stored; concurrent waiters
//! of a failing evaluation get the same error response.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cache::{Cache, CacheKey, CredentialFingerprint, Encoding, Fetched, Outcome};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;

use crate::metrics::Metrics;
use crate::params::timestamp::{now_ns, parse_timestamp};
use crate::tenant::Tenant;
use crate::window::WindowContext;

/// Form bodies larger than this are not cached (and are left to the handler's own limit).
const MAX_KEYED_BODY: usize = 256 * 1024;
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
    /// Creates the cache with its byte bound.
    pub fn new(settings: CacheSettings, metrics: Metrics) -> Self {
        Self {
            cache: Cache::new(cache::Settings {
                max_bytes: settings.max_bytes,
            }),
            settings,
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
            cache_settings: self.settings,
            metrics: self.metrics.clone(),
        }
    }
}

/// The endpoint label of a cacheable route, or `None` for routes never cached.
fn endpoint(path: &str) -> Option<&'static str> {
    let rest = path.strip_prefix("/loki/api/v1/")?;
    Some(match rest {
        "query_range" => "query_range",
        "query" => "query",
        "labels" => "labels",
        "series" => "series",
        "index/stats" => "index_stats",
        "index/volume" => "index_volume",
        "index/volume_range" => "index_volume_range",
        "detected_labels" => "detected_labels",
        "detected_fields" => "detected_fields",
        "patterns" => "patterns",
        _ if rest.starts_with("label/") && rest.ends_with("/values") => "label_values",
        _ if rest.starts_with("detected_field/") && rest.ends_with("/values") => {
            "detected_field_values"
        }
        _ => return None,
    })
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

/// The parameters of a request, normalised: sorted `key=value` pairs from the
/// URL and a form body, so that order and GET-vs-POST do not split entries.
fn normalized_params(uri_query: Option<&str>, body: &[u8]) -> (String, Vec<(String, String)>) {
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let Some(q) = uri_query {
        pairs.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    pairs.extend(form_urlencoded::parse(body).into_owned());
    pairs.sort();
    let mut ser = form_urlencoded::Serializer::new(String::with_capacity(128));
    for (k, v) in &pairs {
        ser.append_pair(k, v);
    }
    (ser.finish(), pairs)
}

/// The key text of a request's parameters without decoding them: the raw
/// `key=value` segments of the URL query and a form body, sorted and joined.
/// Equal raw segments decode equally, so equal texts are the same request;
/// the same request spelled with other escapes only misses a sharing chance.
/// `None` when the body is not UTF-8 (then the decoded pairs are used).
fn raw_params(uri_query: Option<&str>, body: &[u8]) -> Option<String> {
    let body = std::str::from_utf8(body).ok()?;
    let mut segments: Vec<&str> = Vec::with_capacity(8);
    segments.extend(uri_query.unwrap_or("").split('&').filter(|s| !s.is_empty()));
    segments.extend(body.split('&').filter(|s| !s.is_empty()));
    segments.sort_unstable();
    let len = segments.iter().map(|s| s.len() + 1).sum::<usize>();
    let mut out = String::with_capacity(len + 16);
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(s);
    }
    Some(out)
}

/// Appends the query tags (`X-Query-Tags`) to the key text.
fn join_tags(params: &str, tags: &str) -> String {
    let mut out = String::with_capacity(params.len() + tags.len() + 6);
    out.push_str(params);
    out.push_str("\ntags=");
    out.push_str(tags);
    out
}

fn param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The TTL an answer gets: long when its range is closed, the live TTL otherwise.
fn ttl_for(pairs: &[(String, String)], settings: &CacheSettings, now: i64) -> Duration {
    // `end` (range endpoints) or `time` (instant); absent means "now".
    let end = param(pairs, "end")
        .or_else(|| param(pairs, "time"))
        .filter(|v| !v.is_empty())
        .and_then(|v| parse_timestamp(v, now).ok());
    end.map_or(settings.live_ttl, |end| ttl_after(end, settings, now))
}

/// The key text of a metadata request: its parameters without `start`,
/// `end` and `since`, plus the range widened to its bucket (as the handler
/// fetches it), and that range's end. `None` when the range does not parse
/// (the handler answers the error).
fn metadata_request(pairs: &[(String, String)], now: i64) -> Option<(String, i64)> {
    let form = crate::params::Form::from_pairs(pairs.iter().cloned());
    let b = crate::window::bucket::widen(crate::params::bounds(&form, now).ok()?);
    let mut ser = form_urlencoded::Serializer::new(String::with_capacity(128));
    for (k, v) in pairs {
        if !matches!(k.as_str(), "start" | "end" | "since") {
            ser.append_pair(k, v);
        }
    }
    ser.append_pair("bucket", &format!("{}-{}", b.start, b.end));
    Some((ser.finish(), b.end))
}

/// The TTL of an answer for a range ending at `end`.
fn ttl_after(end: i64, settings: &CacheSettings, now: i64) -> Duration {
    let freshness = i64::try_from(settings.freshness.as_nanos()).unwrap_or(i64::MAX);
    if end <= now.saturating_sub(freshness) {
        settings.ttl
    } else {
        settings.live_ttl
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim()
}

/// A keyed hash of the credentials a request forwards upstream.
pub fn credentials(headers: &HeaderMap) -> CredentialFingerprint {
    let parts = [header::AUTHORIZATION, header::COOKIE]
        .into_iter()
        .flat_map(|name| headers.get_all(name).iter().map(HeaderValue::as_bytes));
    CredentialFingerprint::of(parts)
}

/// The key text of a non-metadata request: its raw sorted parameters
/// (`raw`, from [`raw_params`]) or, for a body that is not UTF-8, the decoded
/// ones, then the query tags.
fn params_text(
    raw: Option<String>,
    query: Option<&str>,
    headers: &HeaderMap,
    body: &[u8],
) -> String {
    let tags = header_str(headers, "x-query-tags");
    match raw {
        Some(raw) => join_tags(&raw, tags),
        None => join_tags(&normalized_params(query, body).0, tags),
    }
}

/// The full key: tenant, response-shape flags, credentials, route and request text.
fn key_of(tenant: String, headers: &HeaderMap, path: &str, request: String) -> CacheKey {
    CacheKey::new(
        tenant,
        Encoding::Identity,
        header_str(headers, "x-loki-response-encoding-flags"),
        credentials(headers),
        path,
        request,
    )
}

impl ResponseCache {
    /// Whether a `GET` to `path` can be answered by [`Self::stored_get`]:
    /// caching is on and the route is cached under its raw parameters (not
    /// the bucketed metadata routes). Returns the endpoint label.
    pub(crate) fn plain_get_endpoint(&self, method: &Method, path: &str) -> Option<&'static str> {
        if self.settings.max_bytes == 0 || method != Method::GET {
            return None;
        }
        endpoint(path).filter(|e| !matches!(*e, "labels" | "label_values" | "series"))
    }

    /// The stored answer of a `GET` for `tenant` (the resolved key), keyed
    /// exactly as [`layer`] keys it, or `None` when nothing is stored. Used
    /// by the cache-hit front, which answers hits before the inner layers.
    pub(crate) async fn stored_get(
        &self,
        tenant: &str,
        uri: &http::Uri,
        headers: &HeaderMap,
    ) -> Option<Bytes> {
        let request = params_text(raw_params(uri.query(), b""), uri.query(), headers, b"");
        let key = key_of(tenant.to_owned(), headers, uri.path(), request);
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
    let Some(endpoint) = endpoint(req.uri().path()) else {
        return next.run(req).await;
    };
    if rc.settings.max_bytes == 0 || !matches!(*req.method(), Method::GET | Method::POST) {
        if endpoint == "query_range" {
            req.extensions_mut().insert(rc.window_context());
        }
        return next.run(req).await;
    }
    let (mut parts, body) = req.into_parts();
    let body = if parts.method == Method::POST {
        match http_body_util::Limited::new(body, MAX_KEYED_BODY)
            .collect()
            .await
        {
            Ok(collected) => collected.to_bytes(),
            // Too large or broken: let the handler answer with its own error.
            Err(_) => {
                if endpoint == "query_range" {
                    parts.extensions.insert(rc.window_context());
                }
                return next.run(Request::from_parts(parts, Body::empty())).await;
            }
        }
    } else {
        Bytes::new()
    };

    let now = now_ns();
    // Metadata is keyed (and fetched) by its widened time bucket, so refreshes
    // share an entry; that needs the decoded range. Other routes are keyed by
    // their raw, sorted parameters: no decoding before the lookup.
    let metadata = matches!(endpoint, "labels" | "label_values" | "series");
    let bucketed = if metadata {
        let (_, pairs) = normalized_params(parts.uri.query(), &body);
        metadata_request(&pairs, now)
    } else {
        None
    };
    let raw = if bucketed.is_none() {
        raw_params(parts.uri.query(), &body)
    } else {
        None
    };
    let key = {
        let tenant = parts.extensions.get::<Tenant>().map_or_else(
            || Tenant::from_headers(&parts.headers).as_str().to_owned(),
            |t| t.as_str().to_owned(),
        );
        let request = match (&bucketed, raw) {
            (Some((text, _)), _) => join_tags(text, header_str(&parts.headers, "x-query-tags")),
            (None, raw) => params_text(raw, parts.uri.query(), &parts.headers, &body),
        };
        key_of(tenant, &parts.headers, parts.uri.path(), request)
    };
    // The hit path: stored bytes, nothing else.
    if let Some(body) = rc.cache.get(&key).await {
        return rc.hit_answer(endpoint, body);
    }

    let tenant = parts
        .extensions
        .get::<Tenant>()
        .map_or_else(|| Tenant::from_headers(&parts.headers), Clone::clone);
    let ttl = match &bucketed {
        Some((_, end)) => ttl_after(*end, &rc.settings, now),
        None => ttl_for(
            &normalized_params(parts.uri.query(), &body).1,
            &rc.settings,
            now,
        ),
    };
    if endpoint == "query_range" {
        // The handler splits log ranges into windows cached here too.
        parts.extensions.insert(rc.window_context());
    }

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
    // The fill may run in another task: it must keep the request's tenant.
    let fill = crate::tenant::scope(tenant.clone(), fill);
    let result = rc.cache.get_or_fetch(key, fill).await;
    drop(waiting);
    let stats = rc.cache.stats();
    rc.metrics
        .set_cache_state(stats.weighted_bytes, stats.entries, stats.evictions);
    match result {
        Ok(lookup) => {
            rc.metrics
                .observe_cache(endpoint, outcome_name(lookup.outcome));
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

/// The `outcome` label of `lokivl_cache_requests_total` for a cache lookup.
pub(crate) fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Hit => "hit",
        Outcome::Miss => "miss",
        Outcome::Coalesced => "coalesced",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn parameter_order_and_get_vs_post_share_a_key() {
        let (a, _) = normalized_params(Some("query=%7Ba%3D%22b%22%7D&limit=10"), b"");
        let (b, _) = normalized_params(None, b"limit=10&query=%7Ba%3D%22b%22%7D");
        let (c, _) = normalized_params(Some("limit=10"), b"query=%7Ba%3D%22b%22%7D");
        assert_eq!(a, b);
        assert_eq!(a, c);
        let (d, _) = normalized_params(Some("limit=11&query=%7Ba%3D%22b%22%7D"), b"");
        assert_ne!(a, d);
    }

    #[test]
    fn raw_keys_ignore_order_and_method_but_not_values() {
        let a = raw_params(Some("query=%7Ba%3D%22b%22%7D&limit=10"), b"");
        assert_eq!(a, raw_params(None, b"limit=10&query=%7Ba%3D%22b%22%7D"));
        assert_eq!(a, raw_params(Some("limit=10"), b"query=%7Ba%3D%22b%22%7D"));
        assert_eq!(
            a,
            raw_params(Some("&limit=10&&query=%7Ba%3D%22b%22%7D"), b"")
        );
        assert_ne!(a, raw_params(Some("limit=11&query=%7Ba%3D%22b%22%7D"), b""));
        // `a=1&b=2` is not `a=1%26b%3D2` (one parameter holding `&`).
        assert_ne!(
            raw_params(Some("a=1&b=2"), b""),
            raw_params(Some("a=1%26b%3D2"), b"")
        );
        assert_eq!(raw_params(None, &[0xff]), None);
    }

    #[test]
    fn metadata_refreshes_within_a_bucket_share_a_key() {
        let t0: i64 = 1_736_899_200_000_000_000;
        let now = t0 + 100 * 3_600_000_000_000;
        let pairs = |start: i64, end: i64| {
            vec![
                ("end".to_owned(), end.to_string()),
                ("query".to_owned(), "{app=\"a\"}".to_owned()),
                ("start".to_owned(), start.to_string()),
            ]
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
            metadata_request(&[("start".to_owned(), "x".to_owned())], now),
            None
        );
    }

    #[test]
    fn closed_ranges_get_the_long_ttl_and_the_live_edge_the_short_one() {
        let s = CacheSettings {
            ttl: Duration::from_secs(3600),
            live_ttl: Duration::from_secs(5),
            freshness: Duration::from_secs(600),
            ..CacheSettings::default()
        };
        let now = 2_000_000_000 * 1_000_000_000_i64;
        let pairs = |end: i64| vec![("end".to_owned(), end.to_string())];
        // Ended 11 minutes ago: closed.
        assert_eq!(ttl_for(&pairs(now - 660_000_000_000), &s, now), s.ttl);
        // Ended 5 minutes ago: live edge.
        assert_eq!(ttl_for(&pairs(now - 300_000_000_000), &s, now), s.live_ttl);
        // No end: "now", the live edge.
        assert_eq!(ttl_for(&[], &s, now), s.live_ttl);
        // Instant queries use `time`, in any Loki format (here seconds).
        let t = vec![("time".to_owned(), "1000000000".to_owned())];
        assert_eq!(ttl_for(&t, &s, now), s.ttl);
    }
}

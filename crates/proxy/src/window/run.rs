//! Fetching the windows of one request: in direction order, a few ahead in
//! parallel, each through the byte cache, stopping once `limit` entries are
//! in hand.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cache::{Cache, CacheKey, CredentialFingerprint, Encoding, Fetched, Outcome};

use super::WindowSettings;
use super::answer::WindowAnswer;
use super::merge::merge;
use super::split::Window;
use crate::direction::Direction;
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::response_cache::CacheSettings;
use crate::tenant::Tenant;

/// The cache label of window entries in `lokivl_cache_requests_total`.
const WINDOW_ENDPOINT: &str = "query_range_window";
/// The key route of window entries (never a real path, so never equal to a whole-request key).
const WINDOW_ROUTE: &str = "/loki/api/v1/query_range#window";

/// What the window walk needs from the process: split settings, and the
/// cache (absent when `--cache-max-bytes` is 0). The response-cache layer
/// hands it to the handler as a request extension.
#[derive(Clone)]
pub struct WindowContext {
    /// How to split.
    pub settings: WindowSettings,
    /// The byte cache shared with whole answers.
    pub cache: Option<Cache>,
    /// TTLs and the freshness margin.
    pub cache_settings: CacheSettings,
    /// Where cache outcomes are counted.
    pub metrics: Metrics,
}

impl std::fmt::Debug for WindowContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowContext")
            .field("settings", &self.settings)
            .field("cached", &self.cache.is_some())
            .finish_non_exhaustive()
    }
}

/// Everything that makes two windows of the same range answer differently.
#[derive(Debug, Clone)]
pub struct WindowQuery {
    /// The query in Loki's canonical printing.
    pub query: String,
    /// Entries wanted over the whole range (each window is asked for all of them).
    pub limit: usize,
    /// Walk and entry order.
    pub direction: Direction,
    /// `categorize-labels` was requested (3-tuples).
    pub categorize: bool,
    /// The forwarded credentials.
    pub credentials: CredentialFingerprint,
    /// The request's tenant.
    pub tenant: Option<Tenant>,
}

/// Never shared between tasks as a value: a window error, cloned for every
/// coalesced waiter by [`copy_error`].
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct WindowError(ApiError);

/// Fetches `windows` (in direction order) with `fetch`, which answers one
/// window `[start, end)` with a full Loki streams body for `q.limit` entries,
/// and merges them into the answer of the whole range.
///
/// # Errors
/// The first failing window's error (windows after the limit are not waited for).
pub async fn run<F, Fut>(
    ctx: &WindowContext,
    q: &WindowQuery,
    windows: Vec<Window>,
    fetch: F,
) -> Result<Vec<u8>, ApiError>
where
    F: Fn(Window) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<u8>, ApiError>> + Send + 'static,
{
    let started = Instant::now();
    let fetch = Arc::new(fetch);
    let q = Arc::new(q.clone());
    let mut pending = windows.into_iter();
    let mut inflight: VecDeque<tokio::task::JoinHandle<Result<WindowAnswer, ApiError>>> =
        VecDeque::new();
    let mut done: Vec<WindowAnswer> = Vec::new();
    let mut collected = 0;
    let result = loop {
        while inflight.len() < ctx.settings.parallelism {
            let Some(w) = pending.next() else { break };
            inflight.push_back(spawn_window(ctx, &q, w, Arc::clone(&fetch)));
        }
        let Some(next) = inflight.pop_front() else {
            break Ok(());
        };
        match next.await {
            Ok(Ok(answer)) => {
                collected += answer.len();
                done.push(answer);
                if collected >= q.limit {
                    break Ok(());
                }
            }
            Ok(Err(e)) => break Err(e),
            Err(e) => break Err(ApiError::Internal(format!("window task failed: {e}"))),
        }
    };
    // Windows past the limit are not needed; fills already under way in the
    // cache finish on their own and are kept for the next request.
    for task in inflight {
        task.abort();
    }
    result?;
    let mut out = Vec::new();
    merge(&done, q.limit, q.direction, q.categorize, started, &mut out);
    Ok(out)
}

fn spawn_window<F, Fut>(
    ctx: &WindowContext,
    q: &Arc<WindowQuery>,
    w: Window,
    fetch: Arc<F>,
) -> tokio::task::JoinHandle<Result<WindowAnswer, ApiError>>
where
    F: Fn(Window) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<u8>, ApiError>> + Send + 'static,
{
    let ctx = ctx.clone();
    let q = Arc::clone(q);
    let tenant = q.tenant.clone();
    let task = async move { one_window(&ctx, &q, w, fetch.as_ref()).await };
    match tenant {
        // Spawned work must carry the tenant again (see `tenant::scope`).
        Some(t) => tokio::spawn(crate::tenant::scope(t, task)),
        None => tokio::spawn(task),
    }
}

async fn one_window<F, Fut>(
    ctx: &WindowContext,
    q: &WindowQuery,
    w: Window,
    fetch: &F,
) -> Result<WindowAnswer, ApiError>
where
    F: Fn(Window) -> Fut,
    Fut: Future<Output = Result<Vec<u8>, ApiError>> + Send + 'static,
{
    let Some(cache) = &ctx.cache else {
        let body = Bytes::from(fetch(w).await?);
        return WindowAnswer::from_body(&body).map_err(|e| ApiError::Internal(e.to_string()));
    };
    let key = window_key(q, w);
    let ttl = window_ttl(w, &ctx.cache_settings, crate::params::timestamp::now_ns());
    let body = fetch(w);
    let fill = async move {
        let body = Bytes::from(body.await.map_err(WindowError)?);
        let answer = WindowAnswer::from_body(&body)
            .map_err(|e| WindowError(ApiError::Internal(e.to_string())))?;
        Ok::<_, WindowError>(Fetched::new(answer.to_bytes(), ttl))
    };
    let result = match q.tenant.clone() {
        // The fill may run in another task: it must keep the request's tenant.
        Some(t) => cache.get_or_fetch(key, crate::tenant::scope(t, fill)).await,
        None => cache.get_or_fetch(key, fill).await,
    };
    match result {
        Ok(lookup) => {
            ctx.metrics
                .observe_cache(WINDOW_ENDPOINT, outcome_name(lookup.outcome));
            WindowAnswer::from_bytes(&lookup.body).map_err(|e| ApiError::Internal(e.to_string()))
        }
        Err(cache::Error::Fetch(e)) => {
            ctx.metrics.observe_cache(WINDOW_ENDPOINT, "uncacheable");
            Err(copy_error(&e.0))
        }
        Err(e) => {
            ctx.metrics.observe_cache(WINDOW_ENDPOINT, "failed");
            Err(ApiError::Internal(format!("window cache: {e}")))
        }
    }
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Hit => "hit",
        Outcome::Miss => "miss",
        Outcome::Coalesced => "coalesced",
    }
}

/// The cache key of one window: the tenant, the response shape, the
/// credentials, and the query, limit, direction and window bounds.
fn window_key(q: &WindowQuery, w: Window) -> CacheKey {
    let dir = match q.direction {
        Direction::Forward => "forward",
        Direction::Backward => "backward",
    };
    CacheKey::new(
        q.tenant.as_ref().map_or("", Tenant::as_str),
        Encoding::Identity,
        if q.categorize {
            "categorize-labels"
        } else {
            ""
        },
        q.credentials,
        WINDOW_ROUTE,
        format!("{}\n{dir}\n{}\n{}\n{}", q.query, q.limit, w.start, w.end),
    )
}

/// A window that ended before `now - freshness` is closed: its answer cannot
/// change any more and is kept for the long TTL; the live edge gets the live TTL.
fn window_ttl(w: Window, s: &CacheSettings, now: i64) -> Duration {
    let freshness = i64::try_from(s.freshness.as_nanos()).unwrap_or(i64::MAX);
    if w.end <= now.saturating_sub(freshness) {
        s.ttl
    } else {
        s.live_ttl
    }
}

/// The same error again, for each waiter of a shared failing fill.
fn copy_error(e: &ApiError) -> ApiError {
    match e {
        ApiError::BadRequest(m) => ApiError::BadRequest(m.clone()),
        ApiError::Unsupported(m) => ApiError::Unsupported(m.clone()),
        ApiError::BackendUnreachable { authority, reason } => ApiError::BackendUnreachable {
            authority: authority.clone(),
            reason: reason.clone(),
        },
        ApiError::BackendTimeout(d) => ApiError::BackendTimeout(*d),
        ApiError::BackendRejected { status, message } => ApiError::BackendRejected {
            status: *status,
            message: message.clone(),
        },
        ApiError::BackendFailed { status, message } => ApiError::BackendFailed {
            status: *status,
            message: message.clone(),
        },
        ApiError::Unavailable {
            message,
            retry_after,
        } => ApiError::Unavailable {
            message: message.clone(),
            retry_after: *retry_after,
        },
        ApiError::QueryTimeout(d) => ApiError::QueryTimeout(*d),
        ApiError::TooManyRequests { retry_after } => ApiError::TooManyRequests {
            retry_after: *retry_after,
        },
        other => ApiError::Internal(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(tenant: &str, categorize: bool) -> WindowQuery {
        WindowQuery {
            query: r#"{app="a"}"#.to_owned(),
            limit: 100,
            direction: Direction::Backward,
            categorize,
            credentials: CredentialFingerprint::none(),
            tenant: Some(Tenant::from_headers(&{
                let mut h = http::HeaderMap::new();
                h.insert(
                    crate::tenant::ORG_ID_HEADER,
                    http::HeaderValue::from_str(tenant)
                        .unwrap_or(http::HeaderValue::from_static("x")),
                );
                h
            })),
        }
    }

    #[test]
    fn keys_separate_tenants_shapes_and_windows() {
        let w = Window { start: 0, end: 10 };
        let a = window_key(&q("a", false), w);
        assert_eq!(a, window_key(&q("a", false), w));
        assert_ne!(a, window_key(&q("b", false), w));
        assert_ne!(a, window_key(&q("a", true), w));
        assert_ne!(a, window_key(&q("a", false), Window { start: 0, end: 11 }));
        let mut forward = q("a", false);
        forward.direction = Direction::Forward;
        assert_ne!(a, window_key(&forward, w));
    }

    #[test]
    fn closed_windows_get_the_long_ttl() {
        let s = CacheSettings {
            ttl: Duration::from_secs(3600),
            live_ttl: Duration::from_secs(2),
            freshness: Duration::from_secs(600),
            ..CacheSettings::default()
        };
        let now = 10_000_000_000_000;
        let margin = 600_000_000_000;
        let w = |end| Window { start: 0, end };
        assert_eq!(window_ttl(w(now - margin), &s, now), s.ttl);
        assert_eq!(window_ttl(w(now - margin + 1), &s, now), s.live_ttl);
        assert_eq!(window_ttl(w(now), &s, now), s.live_ttl);
    }

    #[test]
    fn errors_are_copied_with_their_status() {
        let e = ApiError::BackendTimeout(Duration::from_secs(3));
        assert_eq!(copy_error(&e).to_string(), e.to_string());
        let e = ApiError::BadRequest("x".to_owned());
        assert!(matches!(copy_error(&e), ApiError::BadRequest(m) if m == "x"));
    }
}

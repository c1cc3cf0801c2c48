//! Fetching the windows of one request: in direction order, a few ahead in
//! parallel, each through the byte cache, stopping once `limit` entries are
//! in hand.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use cache::{Cache, CacheKey, Encoding, Fetched};

use super::WindowSettings;
use super::fill;
use super::merge::merge;
use super::split::Window;
use super::task::WindowTask;
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::telemetry::Metrics;
use engine::answer::{LogAnswer, StoredLog, StoredView};
use engine::direction::Direction;

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
    pub lifetimes: cache::Lifetimes,
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
    /// The request's context (tenant, credentials, discovery): part of the
    /// key, and what the fetches run under.
    pub request: RequestContext,
}

/// One window's answer as its fetch built it.
#[derive(Debug)]
pub struct WindowBody {
    /// The window's typed answer.
    pub answer: LogAnswer,
    /// Whether the body is the window's own answer and may be stored; not
    /// when the request's shared row budget cut it short.
    pub cacheable: bool,
}

/// Fetches `windows` (in direction order) with `fetch`, which answers one
/// window `[start, end)` with its typed answer for `q.limit` entries, and
/// merges them into the answer of the whole range.
///
/// # Errors
/// The first failing window's error (windows after the limit are not waited for).
pub async fn run<F, Fut>(
    ctx: &WindowContext,
    q: &WindowQuery,
    windows: Vec<Window>,
    fetch: F,
) -> Result<LogAnswer, ApiError>
where
    F: Fn(Window) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<WindowBody, ApiError>> + Send + 'static,
{
    let fetch = Arc::new(fetch);
    let q = Arc::new(q.clone());
    let mut pending = windows.into_iter();
    let mut inflight: VecDeque<WindowTask<Result<StoredLog, ApiError>>> = VecDeque::new();
    let mut done: Vec<StoredLog> = Vec::new();
    let mut collected = 0;
    let limit_reached = loop {
        while inflight.len() < ctx.settings.parallelism {
            let Some(w) = pending.next() else { break };
            inflight.push_back(spawn_window(ctx, &q, w, Arc::clone(&fetch)));
        }
        let Some(next) = inflight.pop_front() else {
            break false;
        };
        match next.await {
            Ok(Ok(answer)) => {
                collected += answer.len();
                done.push(answer);
                if collected >= q.limit {
                    break true;
                }
            }
            // Dropping `inflight` on the way out stops the other windows.
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(ApiError::Internal(format!("window task failed: {e}"))),
        }
    };
    // Windows past the limit are not needed now; with a cache, those already
    // under way finish and are kept for the next refresh (at most
    // `parallelism - 1` of them). Otherwise, and whenever this walk is
    // dropped (the client left), dropping them stops them.
    if limit_reached && ctx.cache.is_some() {
        inflight.into_iter().for_each(WindowTask::detach);
    }
    let views = done
        .iter()
        .map(StoredLog::view)
        .collect::<Result<Vec<StoredView<'_>>, _>>()
        .map_err(internal)?;
    Ok(merge(&views, q.limit, q.direction, q.categorize))
}

fn internal(e: engine::answer::codec::CodecError) -> ApiError {
    ApiError::Internal(e.to_string())
}

fn spawn_window<F, Fut>(
    ctx: &WindowContext,
    q: &Arc<WindowQuery>,
    w: Window,
    fetch: Arc<F>,
) -> WindowTask<Result<StoredLog, ApiError>>
where
    F: Fn(Window) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<WindowBody, ApiError>> + Send + 'static,
{
    let ctx = ctx.clone();
    let q = Arc::clone(q);
    // `fetch` owns the request context it was built with: nothing ambient
    // is lost when the window runs in its own task.
    WindowTask::spawn(async move { one_window(&ctx, &q, w, fetch.as_ref()).await })
}

/// One window in its stored form: the cache's own bytes on a hit or after
/// a fill (shared with the cache, not copied), read in place by the merge.
async fn one_window<F, Fut>(
    ctx: &WindowContext,
    q: &WindowQuery,
    w: Window,
    fetch: &F,
) -> Result<StoredLog, ApiError>
where
    F: Fn(Window) -> Fut,
    Fut: Future<Output = Result<WindowBody, ApiError>> + Send + 'static,
{
    let key = window_key(q, w);
    // A window is an answer like any other: the one TTL rule, on its end.
    let ttl = ctx
        .lifetimes
        .ttl_after(w.end, crate::params::timestamp::now_ns());
    if ctx.cache.is_none() {
        // Nothing is stored, but the merge reads one form: the stored one.
        let fetched = fetch(w).await?;
        return StoredLog::new(fetched.answer.to_bytes()).map_err(internal);
    }
    let fill = || {
        let body = fetch(w);
        async move {
            let fetched = body.await?;
            // Cut by the request's budget: shared with concurrent callers, never kept.
            let ttl = if fetched.cacheable {
                ttl
            } else {
                Duration::ZERO
            };
            // The built answer is dropped here: the merge reads the stored bytes.
            Ok(Fetched::new(fetched.answer.to_bytes(), ttl))
        }
    };
    let body = fill::cached_fetched(ctx, WINDOW_ENDPOINT, key, Some(ttl), fill).await?;
    StoredLog::new(body).map_err(internal)
}

/// The cache key of one window: the tenant, the response shape, the
/// credentials, and the query, limit, direction and window bounds.
fn window_key(q: &WindowQuery, w: Window) -> CacheKey {
    let dir = match q.direction {
        Direction::Forward => "forward",
        Direction::Backward => "backward",
    };
    CacheKey::new(
        q.request.cache_scope(),
        Encoding::Identity,
        if q.categorize {
            "categorize-labels"
        } else {
            ""
        },
        q.request.credentials(),
        WINDOW_ROUTE,
        format!("{}\n{dir}\n{}\n{}\n{}", q.query, q.limit, w.start, w.end),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(tenant: u32, categorize: bool) -> WindowQuery {
        WindowQuery {
            query: r#"{app="a"}"#.to_owned(),
            limit: 100,
            direction: Direction::Backward,
            categorize,
            request: RequestContext::for_tenant(
                crate::tenant::VlTenant {
                    account_id: tenant,
                    project_id: 0,
                },
                logsql_ast::Discovery::default(),
            ),
        }
    }

    #[test]
    fn keys_separate_tenants_shapes_and_windows() {
        let w = Window { start: 0, end: 10 };
        let a = window_key(&q(1, false), w);
        assert_eq!(a, window_key(&q(1, false), w));
        assert_ne!(a, window_key(&q(2, false), w));
        assert_ne!(a, window_key(&q(1, true), w));
        assert_ne!(a, window_key(&q(1, false), Window { start: 0, end: 11 }));
        let mut forward = q(1, false);
        forward.direction = Direction::Forward;
        assert_ne!(a, window_key(&forward, w));
    }
}

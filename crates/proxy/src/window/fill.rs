//! One window through the byte cache: a hit is served as stored bytes, N
//! concurrent callers of one window cause one fill, errors are not kept, and
//! a fill that no request waits for any more is stopped (its VictoriaLogs
//! call cancelled) rather than run to the end. Shared by log windows
//! ([`super::run`]) and metric windows ([`super::matrix`]).

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use cache::{CacheKey, Fetched};

use super::run::WindowContext;
use crate::error::ApiError;

/// Never shared between tasks as a value: a window error, cloned for every
/// coalesced waiter.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct WindowError(ApiError);

/// The bytes of one window: from the cache when present (counted under
/// `endpoint` in `lokivl_cache_requests_total`), else from the fill `make`
/// builds, which is then stored for `ttl`. Without a cache, the fill runs
/// directly.
///
/// The fill is shared by every request waiting for this window and stopped
/// once none waits (all their clients left): dropping this future is how a
/// request stops waiting. `make` may be called again when this request
/// joined a fill that was being stopped.
///
/// # Errors
/// The fill's error (each coalesced waiter gets its own copy).
pub async fn cached<M, Fut>(
    ctx: &WindowContext,
    endpoint: &'static str,
    key: CacheKey,
    ttl: Duration,
    make: M,
) -> Result<Bytes, ApiError>
where
    M: Fn() -> Fut,
    Fut: Future<Output = Result<Bytes, ApiError>> + Send + 'static,
{
    let make = move || {
        let fill = make();
        async move { fill.await.map(|body| Fetched::new(body, ttl)) }
    };
    cached_fetched(ctx, endpoint, key, Some(ttl), make).await
}

/// [`cached`] where the fill decides the TTL itself: [`Duration::ZERO`]
/// shares the fill with concurrent callers but stores nothing (an answer
/// cut by the request's row budget is not the window's own answer).
/// `expected` is the TTL the fill gives when it is not cut: a window that
/// cannot be closed then skips the shared tier's lookup, which could only
/// miss.
///
/// # Errors
/// As [`cached`].
pub async fn cached_fetched<M, Fut>(
    ctx: &WindowContext,
    endpoint: &'static str,
    key: CacheKey,
    expected: Option<Duration>,
    make: M,
) -> Result<Bytes, ApiError>
where
    M: Fn() -> Fut,
    Fut: Future<Output = Result<Fetched, ApiError>> + Send + 'static,
{
    let Some(cache) = &ctx.cache else {
        return make().await.map(|f| f.body);
    };
    // The fill owns its request context (captured by `make`): it may run
    // in another task without losing anything.
    let make = || {
        let fill = make();
        async move { fill.await.map_err(WindowError) }
    };
    let result = cache
        .get_or_fetch_cancellable_expecting(key, expected, make)
        .await;
    match result {
        Ok(lookup) => {
            ctx.metrics
                .observe_cache(endpoint, crate::telemetry::cache_outcome(lookup.outcome));
            Ok(lookup.body)
        }
        Err(cache::Error::Fetch(e)) => {
            ctx.metrics.observe_cache(endpoint, "uncacheable");
            Err(e.0.clone())
        }
        Err(e) => {
            ctx.metrics.observe_cache(endpoint, "failed");
            Err(ApiError::Internal(format!("window cache: {e}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_copied_with_their_status() {
        let e = ApiError::from(crate::backend::BackendError::Timeout(Duration::from_secs(
            3,
        )));
        assert_eq!(e.clone().to_string(), e.to_string());
        assert_eq!(e.clone().status(), http::StatusCode::GATEWAY_TIMEOUT);
        let e = ApiError::BadRequest("x".to_owned());
        assert!(matches!(e.clone(), ApiError::BadRequest(m) if m == "x"));
    }
}

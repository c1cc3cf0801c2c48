//! The error a cache fill hands back to every caller that waited on it.

use std::sync::Arc;

/// Why [`Cache::get_or_fetch`](crate::Cache::get_or_fetch) produced no body.
///
/// Errors are never cached: the next call for the same key fetches again. All
/// callers coalesced onto one failed fill receive the same shared error, which
/// is why the fetch error sits behind an [`Arc`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error<E>
where
    E: std::error::Error + 'static,
{
    /// The caller's fetch future returned an error.
    #[error(transparent)]
    Fetch(Arc<E>),
    /// The task running the fetch panicked; the panic is not propagated so one
    /// bad fill cannot take down the request handlers waiting on it.
    #[error("cache fill task panicked")]
    FillPanicked,
    /// The task running the fetch was cancelled, which only happens while the
    /// Tokio runtime shuts down.
    #[error("cache fill task was cancelled")]
    FillCancelled,
    /// Every caller of [`Cache::get_or_fetch_cancellable`](crate::Cache::get_or_fetch_cancellable)
    /// left before the fill finished, so it was stopped. A caller only sees
    /// this if it joined such a dying fill again and again.
    #[error("cache fill was stopped: nobody waited for it any more")]
    Unwanted,
}

// Hand-written so `E` itself need not be `Clone`: the fetch error is shared.
impl<E> Clone for Error<E>
where
    E: std::error::Error + 'static,
{
    fn clone(&self) -> Self {
        match self {
            Self::Fetch(e) => Self::Fetch(Arc::clone(e)),
            Self::FillPanicked => Self::FillPanicked,
            Self::FillCancelled => Self::FillCancelled,
            Self::Unwanted => Self::Unwanted,
        }
    }
}

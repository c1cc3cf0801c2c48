//! The spawned task of one window, aborted when dropped.
//!
//! A request's windows run as tasks (so they proceed in parallel); a plain
//! `JoinHandle` dropped with the request would leave them running after the
//! client left. Aborting drops the window's wait on its cache fill, and a
//! fill no request waits for any more is stopped ([`super::fill::cached`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::task::{JoinError, JoinHandle};

/// A [`JoinHandle`] that aborts its task on drop, unless detached.
#[derive(Debug)]
pub(super) struct WindowTask<T>(Option<JoinHandle<T>>);

impl<T: Send + 'static> WindowTask<T> {
    /// Spawns `fut` on the runtime.
    pub(super) fn spawn<F>(fut: F) -> Self
    where
        F: Future<Output = T> + Send + 'static,
    {
        Self(Some(tokio::spawn(fut)))
    }

    /// Lets the task run to its end with nobody awaiting it (a window
    /// fetched ahead, whose answer the cache keeps).
    pub(super) fn detach(mut self) {
        self.0 = None;
    }
}

impl<T> Future for WindowTask<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.0 {
            Some(handle) => Pin::new(handle).poll(cx),
            // Only `detach` empties it, and it consumes the task.
            None => Poll::Pending,
        }
    }
}

impl<T> Drop for WindowTask<T> {
    fn drop(&mut self) {
        if let Some(handle) = &self.0 {
            handle.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn dropping_the_handle_ends_the_task() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = WindowTask::spawn(async move {
            let _keep = tx;
            std::future::pending::<()>().await;
        });
        drop(task);
        // The sender is dropped with the aborted task.
        assert!(rx.await.is_err());
        let done = WindowTask::spawn(async { 7 });
        assert_eq!(done.await.unwrap(), 7);
        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        WindowTask::spawn(async move {
            tokio::task::yield_now().await;
            let _ = tx.send(1);
        })
        .detach();
        assert_eq!(rx.await, Ok(1), "a detached task runs to its end");
    }
}

//! The spawned task of one window, aborted when dropped.
//!
//! A request's windows run as tasks (so they proceed in parallel); a plain
//! `JoinHandle` dropped with the request would leave them running after the
//! client left. Aborting drops the window's wait on its cache fill, and a
//! fill no request waits for any more is stopped ([`super::fill::cached`]).
//!
//! A spawned task starts without the request's task-locals, so the window
//! carries them over ([`RequestLocals`]): without the discovery settings a
//! window's series lack `service_name` and `detected_level`, and the merged
//! answer is not the unsplit one.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use logsql_ast::Discovery;
use tokio::task::{JoinError, JoinHandle};

use crate::params::QueryLimits;
use crate::tenant::Tenant;

/// The task-locals a request's handler reads (tenant, discovery settings,
/// query limits), captured in the request's task and entered again in the
/// tasks its windows and cache fills run in.
#[derive(Debug, Clone)]
pub(super) struct RequestLocals {
    tenant: Option<Tenant>,
    discovery: Discovery,
    limits: QueryLimits,
}

impl RequestLocals {
    /// The running request's locals, with `tenant` as its tenant.
    pub(super) fn current(tenant: Option<Tenant>) -> Self {
        Self {
            tenant,
            discovery: crate::drilldown::discovery::flags::current(),
            limits: QueryLimits::current(),
        }
    }

    /// Runs `fut` inside these locals.
    pub(super) async fn scope<F: Future>(self, fut: F) -> F::Output {
        let fut = crate::drilldown::discovery::flags::scope(
            self.discovery,
            crate::params::limits::scope(self.limits, fut),
        );
        match self.tenant {
            Some(t) => crate::tenant::scope(t, fut).await,
            None => fut.await,
        }
    }
}

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

    /// Spawns `fut` inside `locals` (see [`RequestLocals`]).
    pub(super) fn spawn_in(
        locals: RequestLocals,
        fut: impl Future<Output = T> + Send + 'static,
    ) -> Self {
        Self::spawn(locals.scope(fut))
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
    async fn a_window_task_keeps_the_requests_discovery_and_limits() {
        let discovery = crate::drilldown::discovery::flags::loki_defaults();
        let limits = QueryLimits {
            max_entries_limit: 7,
            ..QueryLimits::default()
        };
        let seen = crate::drilldown::discovery::flags::scope(
            discovery.clone(),
            crate::params::limits::scope(limits, async {
                WindowTask::spawn_in(RequestLocals::current(None), async {
                    (
                        crate::drilldown::discovery::flags::current(),
                        QueryLimits::current(),
                    )
                })
                .await
            }),
        )
        .await
        .unwrap();
        assert_eq!(seen, (discovery, limits));
    }

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

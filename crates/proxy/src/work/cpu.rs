//! CPU-heavy steps (row pipelines, metric extraction, Drain, detected
//! fields) on tokio's blocking pool, a bounded number at a time, so the
//! async workers stay free for `accept`, `/ready` and cache hits.
//!
//! A job owns its input (the body and compiled state are moved in and
//! handed back), polls a [`Stop`] as it goes, and is refused at the
//! request's deadline while it waits for a slot. Small inputs run inline:
//! handing them to another thread would cost more than they take, and they
//! never queue behind heavy jobs.

use std::num::NonZeroUsize;
use std::sync::{Arc, LazyLock};

use tokio::sync::Semaphore;

use super::stop::{Deadline, Stop, Stopped};

/// Inputs up to this many bytes are processed inline on the async worker
/// (about a millisecond of work); the same bound the log-query encoder used.
pub const INLINE_MAX: usize = 256 * 1024;

/// Blocking jobs running at once in the process: one per core, at least two.
/// More would not finish sooner, only hold more rows in memory at once.
static SLOTS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| Arc::new(Semaphore::new(slots())));

/// The number of job slots: the cores the process may use, at least two.
pub fn slots() -> usize {
    std::thread::available_parallelism()
        .map_or(2, NonZeroUsize::get)
        .max(2)
}

/// Runs `job` over an input of `size` bytes: inline when it is small
/// ([`INLINE_MAX`]), else on the blocking pool once a slot is free.
///
/// Dropping the returned future (client gone, `query_timeout` fired) makes
/// the job's [`Stop`] trigger, so the job ends at its next check instead of
/// running to completion for nobody.
///
/// # Errors
/// The job's own error; [`Stopped`] (converted) when the deadline passed
/// while waiting for a slot.
///
/// # Panics
/// A panic in the job is resumed in the caller, as if it had run inline.
pub async fn run<T, E, F>(deadline: Deadline, size: usize, job: F) -> Result<T, E>
where
    F: FnOnce(&Stop) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: From<Stopped> + Send + 'static,
{
    let stop = Stop::at(deadline);
    if size <= INLINE_MAX {
        stop.check()?;
        return job(&stop);
    }
    let acquire = Arc::clone(&SLOTS).acquire_owned();
    let slot = match deadline.instant() {
        Some(at) => tokio::time::timeout_at(at.into(), acquire)
            .await
            .map_err(|_| deadline.stopped())?,
        None => acquire.await,
    }
    // The semaphore is never closed.
    .map_err(|_| deadline.stopped())?;
    let _abandon = stop.abandon_on_drop();
    let handle = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        stop.check()?;
        job(&stop)
    });
    match handle.await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // The runtime is shutting down.
        Err(_) => Err(deadline.stopped().into()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn large_inputs_run_off_the_calling_thread_and_small_ones_inline() {
        let here = std::thread::current().id();
        let ran = run(Deadline::NONE, INLINE_MAX + 1, |_| {
            Ok::<_, Stopped>(std::thread::current().id())
        })
        .await
        .unwrap();
        assert_ne!(ran, here);
        let ran = run(Deadline::NONE, 10, |_| {
            Ok::<_, Stopped>(std::thread::current().id())
        })
        .await
        .unwrap();
        assert_eq!(ran, here);
    }

    #[tokio::test]
    async fn jobs_run_at_most_slots_at_once() {
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let jobs: Vec<_> = (0..slots() * 3)
            .map(|_| {
                let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
                tokio::spawn(run(Deadline::NONE, usize::MAX, move |_| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, Stopped>(())
                }))
            })
            .collect();
        for j in jobs {
            j.await.unwrap().unwrap();
        }
        let peak = peak.load(Ordering::SeqCst);
        assert!((1..=slots()).contains(&peak), "peak {peak}");
    }

    #[tokio::test]
    async fn a_dropped_caller_stops_the_job() {
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let fut = run(Deadline::NONE, usize::MAX, move |stop| {
            let _ = started_tx.send(());
            let mut rows = 0usize;
            let r: Result<(), Stopped> = loop {
                if let Err(e) = stop.every(rows) {
                    break Err(e);
                }
                rows += 1;
                std::thread::sleep(Duration::from_micros(1));
            };
            let _ = done_tx.send(r);
            Ok::<_, Stopped>(())
        });
        let task = tokio::spawn(fut);
        started_rx.await.unwrap();
        task.abort();
        let r = tokio::task::spawn_blocking(move || done_rx.recv_timeout(Duration::from_secs(60)))
            .await
            .unwrap()
            .expect("the job ends once its caller is gone");
        assert!(r.is_err());
    }

    #[tokio::test]
    async fn the_deadline_stops_a_running_job() {
        let r = run(
            Deadline::after(Duration::from_millis(50)),
            usize::MAX,
            |stop| {
                let mut rows = 0usize;
                loop {
                    stop.every(rows)?;
                    rows += 1;
                    std::thread::sleep(Duration::from_micros(1));
                }
            },
        )
        .await;
        let r: Result<(), Stopped> = r;
        assert_eq!(r, Err(Stopped(Duration::from_millis(50))));
    }
}

//! Bounded global concurrency towards VictoriaLogs, with a bounded wait queue.
//!
//! At most `concurrency` calls run at once; up to `queue` more wait for a
//! slot. A call arriving when the queue is full is refused at once (503 with
//! `Retry-After`) so memory and sockets stay bounded under overload.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The shared gate; clones share the slots.
#[derive(Debug, Clone)]
pub struct Gate {
    slots: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
    queue: usize,
}

/// The queue was full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

impl Gate {
    /// A gate letting `concurrency` calls run (at least one) and `queue` wait.
    pub fn new(concurrency: usize, queue: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            waiting: Arc::new(AtomicUsize::new(0)),
            queue,
        }
    }

    /// Waits for a slot; the slot is freed when the permit is dropped.
    ///
    /// # Errors
    /// [`Full`] when every slot is busy and `queue` calls already wait.
    pub async fn enter(&self) -> Result<OwnedSemaphorePermit, Full> {
        if let Ok(p) = self.slots.clone().try_acquire_owned() {
            return Ok(p);
        }
        // Reserve a queue place first; undo when over the bound.
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Full);
        }
        let _place = Place(&self.waiting);
        // The semaphore is never closed, so this cannot fail; map it anyway.
        self.slots.clone().acquire_owned().await.map_err(|_| Full)
    }

    /// Calls waiting for a slot now (a metrics gauge).
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Calls running now (a metrics gauge).
    pub fn running(&self, concurrency: usize) -> usize {
        concurrency.max(1) - self.slots.available_permits()
    }
}

/// Frees the queue place when the waiter gets its slot or is cancelled.
struct Place<'a>(&'a AtomicUsize);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn queue_is_bounded_and_freed_on_cancel() {
        let g = Gate::new(1, 1);
        let held = g.enter().await.unwrap();
        let g2 = g.clone();
        let waiter = tokio::spawn(async move { g2.enter().await.map(drop) });
        while g.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(g.enter().await.unwrap_err(), Full);
        waiter.abort();
        let _ = waiter.await;
        assert_eq!(g.waiting(), 0);
        drop(held);
        assert!(g.enter().await.is_ok());
    }

    #[tokio::test]
    async fn waiter_gets_the_slot_when_freed() {
        let g = Gate::new(1, 4);
        let held = g.enter().await.unwrap();
        assert_eq!(g.running(1), 1);
        let g2 = g.clone();
        let waiter = tokio::spawn(async move { g2.enter().await.is_ok() });
        tokio::task::yield_now().await;
        drop(held);
        assert!(waiter.await.unwrap());
        assert_eq!(g.waiting(), 0);
    }
}

//! Who still awaits a fill: every caller of
//! [`Cache::get_or_fetch_cancellable`](crate::Cache::get_or_fetch_cancellable)
//! holds an [`Interest`] in its key while it waits, and when the last one is
//! dropped the fill of that key is told to stop.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use crate::key::CacheKey;

/// The callers waiting per key. One entry lives from the first caller's
/// arrival to the last one's departure (a "generation"); a fill listens to
/// the stop signal of the generation that started it.
#[derive(Default)]
pub(crate) struct Registry {
    slots: Mutex<HashMap<CacheKey, Slot>>,
}

struct Slot {
    /// Callers of this generation still waiting.
    count: usize,
    /// Which generation this is (a later one never answers for an earlier one's callers).
    generation: u64,
    stop: watch::Sender<bool>,
}

/// One caller's interest in a key; dropping it (the caller went away or got
/// its answer) ends the interest.
pub(crate) struct Interest {
    registry: Arc<Registry>,
    key: CacheKey,
    generation: u64,
    stop: watch::Receiver<bool>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<CacheKey, Slot>> {
        // A poisoned lock only means a panic elsewhere; the counts stay usable.
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers one more caller waiting for `key`.
    pub(crate) fn join(self: &Arc<Self>, key: &CacheKey) -> Interest {
        static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut slots = self.lock();
        let slot = slots.entry(key.clone()).or_insert_with(|| Slot {
            count: 0,
            generation: GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            stop: watch::Sender::new(false),
        });
        slot.count += 1;
        Interest {
            registry: Arc::clone(self),
            key: key.clone(),
            generation: slot.generation,
            stop: slot.stop.subscribe(),
        }
    }

    /// Keys with waiting callers (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

impl Interest {
    /// Completes once every caller of this generation is gone.
    pub(crate) fn stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stop = self.stop.clone();
        async move {
            // An error means the sender is gone, which only happens after it said stop.
            let _ = stop.wait_for(|s| *s).await;
        }
    }
}

impl Drop for Interest {
    fn drop(&mut self) {
        let mut slots = self.registry.lock();
        let Some(slot) = slots.get_mut(&self.key) else {
            return;
        };
        if slot.generation != self.generation {
            return;
        }
        slot.count -= 1;
        if slot.count == 0 {
            slot.stop.send_replace(true);
            slots.remove(&self.key);
        }
    }
}

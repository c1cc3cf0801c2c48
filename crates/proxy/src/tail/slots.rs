//! Loki's `max_concurrent_tail_requests`: running tails counted per tenant.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Per-tenant tail counters; clones share them.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    running: Arc<Mutex<HashMap<String, usize>>>,
}

/// Loki's text when a tenant already runs `limit` tails.
pub fn limit_text(count: usize, limit: usize) -> String {
    format!("max concurrent tail requests limit exceeded, count > limit ({count} > {limit})")
}

impl Slots {
    /// Takes a slot for `tenant`, or says why not (Loki's text).
    ///
    /// # Errors
    /// [`limit_text`] when `limit` tails already run for `tenant`.
    pub fn acquire(&self, tenant: &str, limit: usize) -> Result<Slot, String> {
        let mut map = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(tenant.to_owned()).or_insert(0);
        if *n >= limit {
            return Err(limit_text(*n + 1, limit));
        }
        *n += 1;
        Ok(Slot {
            slots: self.clone(),
            tenant: tenant.to_owned(),
        })
    }

    /// Tails running for `tenant`.
    pub fn running(&self, tenant: &str) -> usize {
        let map = self.running.lock().unwrap_or_else(|p| p.into_inner());
        map.get(tenant).copied().unwrap_or(0)
    }
}

/// A held slot; dropping it frees the slot.
#[derive(Debug)]
pub struct Slot {
    slots: Slots,
    tenant: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut map = self.slots.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.tenant) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tenant_limit_and_release() {
        let s = Slots::default();
        let a1 = s.acquire("a", 2).unwrap();
        let _a2 = s.acquire("a", 2).unwrap();
        assert_eq!(
            s.acquire("a", 2).unwrap_err(),
            "max concurrent tail requests limit exceeded, count > limit (3 > 2)"
        );
        let _b = s.acquire("b", 2).unwrap();
        drop(a1);
        assert_eq!(s.running("a"), 1);
        assert!(s.acquire("a", 2).is_ok());
    }
}

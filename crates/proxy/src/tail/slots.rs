//! Running tails, counted per tenant (Loki's `max_concurrent_tail_requests`)
//! and over all tenants (lokivl's own bound: each tail holds a socket, a
//! VictoriaLogs connection and a query VictoriaLogs reruns every refresh).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Tail counters; clones share them.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    running: Arc<Mutex<Running>>,
}

#[derive(Debug, Default)]
struct Running {
    per_tenant: HashMap<String, usize>,
    total: usize,
}

/// How many tails may run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Per tenant (`--tail-max-concurrent`).
    pub per_tenant: usize,
    /// Over all tenants (`--tail-max-concurrent-total`).
    pub total: usize,
}

/// Loki's text when a tenant already runs `limit` tails.
pub fn limit_text(count: usize, limit: usize) -> String {
    format!("max concurrent tail requests limit exceeded, count > limit ({count} > {limit})")
}

/// Loki's text, marked as the bound over all tenants, when `limit` tails already run.
pub fn total_limit_text(count: usize, limit: usize) -> String {
    format!("{} over all tenants", limit_text(count, limit))
}

impl Slots {
    fn lock(&self) -> MutexGuard<'_, Running> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a slot for `tenant`, or says why not (the tenant's cap first, as Loki).
    ///
    /// # Errors
    /// [`limit_text`] when `caps.per_tenant` tails already run for `tenant`,
    /// [`total_limit_text`] when `caps.total` run in all.
    pub fn acquire(&self, tenant: &str, caps: Caps) -> Result<Slot, String> {
        let mut r = self.lock();
        let n = r.per_tenant.get(tenant).copied().unwrap_or(0);
        if n >= caps.per_tenant {
            return Err(limit_text(n + 1, caps.per_tenant));
        }
        if r.total >= caps.total {
            return Err(total_limit_text(r.total + 1, caps.total));
        }
        *r.per_tenant.entry(tenant.to_owned()).or_insert(0) += 1;
        r.total += 1;
        Ok(Slot {
            slots: self.clone(),
            tenant: tenant.to_owned(),
        })
    }

    /// Tails running for `tenant`.
    pub fn running(&self, tenant: &str) -> usize {
        self.lock().per_tenant.get(tenant).copied().unwrap_or(0)
    }

    /// Tails running over all tenants.
    pub fn running_total(&self) -> usize {
        self.lock().total
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
        let mut r = self.slots.lock();
        r.total = r.total.saturating_sub(1);
        if let Some(n) = r.per_tenant.get_mut(&self.tenant) {
            *n -= 1;
            if *n == 0 {
                r.per_tenant.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps {
        per_tenant: 2,
        total: 100,
    };

    #[test]
    fn per_tenant_limit_and_release() {
        let s = Slots::default();
        let a1 = s.acquire("a", CAPS).unwrap();
        let _a2 = s.acquire("a", CAPS).unwrap();
        assert_eq!(
            s.acquire("a", CAPS).unwrap_err(),
            "max concurrent tail requests limit exceeded, count > limit (3 > 2)"
        );
        let _b = s.acquire("b", CAPS).unwrap();
        drop(a1);
        assert_eq!(s.running("a"), 1);
        assert!(s.acquire("a", CAPS).is_ok());
    }

    #[test]
    fn total_limit_over_tenants_and_release() {
        let s = Slots::default();
        let caps = Caps {
            per_tenant: 10,
            total: 2,
        };
        let a = s.acquire("a", caps).unwrap();
        let _b = s.acquire("b", caps).unwrap();
        assert_eq!(
            s.acquire("c", caps).unwrap_err(),
            "max concurrent tail requests limit exceeded, count > limit (3 > 2) over all tenants"
        );
        assert_eq!(s.running("c"), 0, "a refused tail holds nothing");
        drop(a);
        assert_eq!(s.running_total(), 1);
        assert!(s.acquire("c", caps).is_ok());
    }
}

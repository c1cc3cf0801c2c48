//! Per-tenant token buckets.
//!
//! Each tenant gets `burst` tokens refilled at `rate` per second; a request
//! takes one. The map is bounded: when it grows past [`MAX_TENANTS`], full
//! (idle) buckets are forgotten, which loses nothing since a full bucket is
//! what a new tenant starts with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// Tenants tracked before idle ones are dropped.
const MAX_TENANTS: usize = 10_000;

/// A shared per-tenant rate limiter; clones share the buckets.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Arc<Mutex<HashMap<String, Bucket>>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// A limiter of `rate` requests/s with `burst` extra; `rate` ≤ 0 disables it.
    pub fn new(rate: f64, burst: u32) -> Self {
        Self {
            rate,
            burst: f64::from(burst.max(1)),
            buckets: Arc::default(),
        }
    }

    /// Takes a token for `tenant`.
    ///
    /// # Errors
    /// The time until a token is available, when none is left.
    pub fn check(&self, tenant: &str) -> Result<(), Duration> {
        if self.rate <= 0.0 || !self.rate.is_finite() {
            return Ok(());
        }
        let now = Instant::now();
        let mut map = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() >= MAX_TENANTS && !map.contains_key(tenant) {
            let (rate, burst) = (self.rate, self.burst);
            map.retain(|_, b| refill(b, now, rate, burst) < burst);
        }
        let b = map.entry(tenant.to_owned()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let tokens = refill(b, now, self.rate, self.burst);
        if tokens >= 1.0 {
            b.tokens = tokens - 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - tokens) / self.rate))
        }
    }
}

/// Brings `b` up to date and returns its tokens.
fn refill(b: &mut Bucket, now: Instant, rate: f64, burst: f64) -> f64 {
    let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
    b.tokens = (b.tokens + elapsed * rate).min(burst);
    b.at = now;
    b.tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn burst_then_refill_per_tenant() {
        let r = RateLimiter::new(2.0, 3);
        for _ in 0..3 {
            assert!(r.check("a").is_ok());
        }
        let wait = r.check("a").unwrap_err();
        assert!(
            wait <= Duration::from_millis(500) && wait > Duration::ZERO,
            "{wait:?}"
        );
        // Another tenant is not affected.
        assert!(r.check("b").is_ok());
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(r.check("a").is_ok());
        assert!(r.check("a").is_err());
    }

    #[test]
    fn zero_rate_is_unlimited() {
        let r = RateLimiter::new(0.0, 1);
        for _ in 0..1000 {
            assert!(r.check("a").is_ok());
        }
    }
}

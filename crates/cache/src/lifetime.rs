//! How long an answer is kept: the one TTL rule of lokivl, for whole answers
//! (the response cache) and for log-range windows alike.
//!
//! An answer is complete once the newest log it reads is older than the
//! freshness margin: its data cannot change any more and it is kept for the
//! long TTL. An answer touching the live edge gets the live TTL (zero: only
//! coalesced), so late data is never hidden for long. Callers work out the
//! end of the data an answer reads; this rule only compares it with now.

use std::time::Duration;

/// The TTLs and the freshness margin (`--cache-ttl`, `--cache-live-ttl`, `--cache-freshness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetimes {
    /// TTL of answers whose data ended before `now - freshness`.
    pub ttl: Duration,
    /// TTL of answers that touch the live edge.
    pub live_ttl: Duration,
    /// How far behind now the data must end to count as closed.
    pub freshness: Duration,
}

impl Lifetimes {
    /// The TTL of an answer whose data ends at `data_end` (Unix nanoseconds), at `now`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let l = cache::Lifetimes {
    ///     ttl: Duration::from_secs(3600),
    ///     live_ttl: Duration::ZERO,
    ///     freshness: Duration::from_secs(600),
    /// };
    /// let now = 10_000_000_000_000;
    /// assert_eq!(l.ttl_after(now - 600_000_000_000, now), l.ttl);
    /// assert_eq!(l.ttl_after(now - 1, now), l.live_ttl);
    /// ```
    pub fn ttl_after(&self, data_end: i64, now: i64) -> Duration {
        let freshness = i64::try_from(self.freshness.as_nanos()).unwrap_or(i64::MAX);
        if data_end <= now.saturating_sub(freshness) {
            self.ttl
        } else {
            self.live_ttl
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_itself_is_closed() {
        let l = Lifetimes {
            ttl: Duration::from_secs(3600),
            live_ttl: Duration::from_secs(2),
            freshness: Duration::from_secs(600),
        };
        let now = 10_000_000_000_000;
        let margin = 600_000_000_000;
        assert_eq!(l.ttl_after(now - margin, now), l.ttl);
        assert_eq!(l.ttl_after(now - margin + 1, now), l.live_ttl);
        assert_eq!(l.ttl_after(now, now), l.live_ttl);
    }
}

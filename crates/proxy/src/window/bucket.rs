//! Time buckets for metadata requests (`labels`, label values, `series`).
//!
//! Grafana asks for label names and values over "now − 6h … now" on every
//! dashboard refresh, so the exact bounds never repeat. Rounding `start` down
//! and `end` up to a bucket that grows with the range makes refreshes within
//! one bucket the same request: one cache entry, one backend call.
//!
//! The widened range is what VictoriaLogs is asked for, so the answer is
//! complete for the requested range and may hold a few names or values seen
//! only in the widened edges (at most one bucket on each side). Loki's own
//! label results cache answers the same way: it serves a cached split's
//! whole answer for any sub-range, since label lists cannot be cut by time.

use crate::params::Bounds;

const MINUTE: i64 = 60_000_000_000;
const HOUR: i64 = 60 * MINUTE;

/// The bucket length for a range of `len` nanoseconds: 5 min up to 6 h, 1 h
/// up to 48 h, 6 h beyond.
pub fn bucket_len(len: i64) -> i64 {
    if len <= 6 * HOUR {
        5 * MINUTE
    } else if len <= 48 * HOUR {
        HOUR
    } else {
        6 * HOUR
    }
}

/// `bounds` with `start` rounded down and `end` rounded up to the bucket of
/// the range's length. Empty or inverted ranges are left as they are, so the
/// handler still reports them as Loki does.
pub fn widen(bounds: Bounds) -> Bounds {
    if bounds.end <= bounds.start {
        return bounds;
    }
    let step = bucket_len(bounds.end.saturating_sub(bounds.start));
    let start = bounds.start.div_euclid(step).saturating_mul(step);
    let up = bounds.end.div_euclid(step) + i64::from(bounds.end.rem_euclid(step) != 0);
    Bounds {
        start,
        end: up.saturating_mul(step),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(start: i64, end: i64) -> Bounds {
        Bounds { start, end }
    }

    #[test]
    fn bucket_grows_with_the_range() {
        assert_eq!(bucket_len(HOUR), 5 * MINUTE);
        assert_eq!(bucket_len(6 * HOUR), 5 * MINUTE);
        assert_eq!(bucket_len(6 * HOUR + 1), HOUR);
        assert_eq!(bucket_len(48 * HOUR), HOUR);
        assert_eq!(bucket_len(48 * HOUR + 1), 6 * HOUR);
    }

    #[test]
    fn refreshes_within_a_bucket_land_on_one_range() {
        let t0 = 1_736_899_200_000_000_000; // an hour boundary
        let first = widen(b(t0 + MINUTE, t0 + 6 * HOUR + MINUTE - 1));
        let later = widen(b(t0 + 3 * MINUTE, t0 + 6 * HOUR + 3 * MINUTE - 1));
        assert_eq!(first, later);
        assert_eq!(first, b(t0, t0 + 6 * HOUR + 5 * MINUTE));
    }

    #[test]
    fn the_widened_range_covers_the_requested_one() {
        let t0 = 1_736_899_200_000_000_000;
        for (s, e) in [
            (t0 + 1, t0 + 2),
            (t0, t0 + 5 * MINUTE),
            (t0 - 7, t0 + 30 * HOUR + 9),
            (t0 + 11, t0 + 100 * HOUR - 3),
        ] {
            let w = widen(b(s, e));
            assert!(w.start <= s && w.end >= e, "{w:?}");
            let step = bucket_len(e - s);
            assert_eq!(w.start.rem_euclid(step), 0);
            assert_eq!(w.end.rem_euclid(step), 0);
            assert!(s - w.start < step && w.end - e < step);
        }
        // Already aligned bounds do not move.
        assert_eq!(widen(b(t0, t0 + HOUR)), b(t0, t0 + HOUR));
        assert_eq!(widen(b(t0, t0)), b(t0, t0));
    }
}

//! Cutting a Loki `[start, end)` range into windows aligned to the interval.
//!
//! Windows are aligned to multiples of the interval since the Unix epoch, so
//! that a dashboard refreshing "the last 6 hours" asks for the same closed
//! windows on every refresh and only the edges differ. The first and last
//! window are clipped to the request, so together they cover `[start, end)`
//! exactly, nanosecond for nanosecond, without overlap.

use engine::direction::Direction;

/// One window: `[start, end)` in Unix nanoseconds, like Loki's log ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    /// First nanosecond, inclusive.
    pub start: i64,
    /// End, exclusive.
    pub end: i64,
}

/// The windows of `[start, end)` in `direction` order (newest first for
/// backward), or `None` when the range should run whole: splitting is off
/// (`interval` ≤ 0) or the range is no longer than one interval (splitting it
/// would double the backend calls and gain nothing a whole-range cache entry
/// does not already give).
pub fn windows(start: i64, end: i64, interval: i64, direction: Direction) -> Option<Vec<Window>> {
    if interval <= 0 || end <= start || end.saturating_sub(start) <= interval {
        return None;
    }
    let first = start.div_euclid(interval);
    let last = (end - 1).div_euclid(interval);
    let mut out = Vec::with_capacity(usize::try_from(last - first + 1).unwrap_or(0));
    for k in first..=last {
        let lo = k.saturating_mul(interval);
        let hi = lo.saturating_add(interval);
        out.push(Window {
            start: lo.max(start),
            end: hi.min(end),
        });
    }
    if direction == Direction::Backward {
        out.reverse();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000_000_000;

    #[test]
    fn short_ranges_and_disabled_splitting_run_whole() {
        assert_eq!(windows(0, H, H, Direction::Forward), None);
        assert_eq!(windows(5, H + 5, H, Direction::Forward), None);
        assert_eq!(windows(0, 10 * H, 0, Direction::Forward), None);
        assert_eq!(windows(10, 10, H, Direction::Forward), None);
    }

    #[test]
    fn windows_cover_the_range_exactly_on_aligned_boundaries() {
        let (start, end) = (H / 2, 3 * H + 7);
        let w = windows(start, end, H, Direction::Forward).unwrap_or_default();
        assert_eq!(
            w,
            vec![
                Window { start, end: H },
                Window {
                    start: H,
                    end: 2 * H
                },
                Window {
                    start: 2 * H,
                    end: 3 * H
                },
                Window { start: 3 * H, end },
            ]
        );
        // Back to back, no gap, no overlap.
        assert!(w.windows(2).all(|p| p[0].end == p[1].start));
    }

    #[test]
    fn an_end_on_a_boundary_makes_no_empty_window() {
        let w = windows(0, 2 * H, H, Direction::Forward).unwrap_or_default();
        assert_eq!(w.len(), 2);
        assert_eq!(
            w[1],
            Window {
                start: H,
                end: 2 * H
            }
        );
        let w = windows(H - 1, 2 * H + 1, H, Direction::Forward).unwrap_or_default();
        assert_eq!(
            w.first(),
            Some(&Window {
                start: H - 1,
                end: H
            })
        );
        assert_eq!(
            w.last(),
            Some(&Window {
                start: 2 * H,
                end: 2 * H + 1
            })
        );
    }

    #[test]
    fn backward_walks_newest_first() {
        let w = windows(0, 3 * H, H, Direction::Backward).unwrap_or_default();
        assert_eq!(
            w.first(),
            Some(&Window {
                start: 2 * H,
                end: 3 * H
            })
        );
        assert_eq!(w.last(), Some(&Window { start: 0, end: H }));
    }

    #[test]
    fn negative_times_align_too() {
        let w = windows(-H - 1, H, H, Direction::Forward).unwrap_or_default();
        assert_eq!(
            w[0],
            Window {
                start: -H - 1,
                end: -H
            }
        );
        assert_eq!(w.len(), 3);
    }
}

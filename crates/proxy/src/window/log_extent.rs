//! The live window of a log `query_range`, cut at the fresh mark.
//!
//! A refreshing dashboard's newest window holds up to an interval of logs,
//! and without a cut it is fetched whole on every refresh. Its part older
//! than `now − freshness` can no longer change, so it is cut off at that
//! mark (rounded down to the whole minute, so refreshes within one minute
//! name the same piece): the older part is closed, kept for the long TTL
//! like any other window, and only `[mark, end)` is asked again. The older
//! part is cut once more at the mark rounded down to 10 minutes, so that
//! the piece a new minute adds, `[mark10, mark)`, is at most 10 minutes
//! long and `[window start, mark10)` changes only every 10 minutes. A
//! backward query for the newest N lines walks the fresh piece first and
//! usually stops there.
//!
//! The pieces are windows like the others: walked in direction order and
//! merged by [`super::merge`], so `limit` and `direction` stay exact (the
//! newest N of a backward query, the oldest N of a forward one).

use std::time::Duration;

use super::WindowContext;
use super::split::{Window, windows};
use engine::direction::Direction;

const MINUTE: i64 = 60_000_000_000;
/// The coarse cut of the closed part of a live window.
const COARSE: i64 = 10 * MINUTE;

/// The windows of `[start, end)` as [`windows`] cuts them, with the window
/// holding the fresh mark (`now − freshness`, rounded down to the minute)
/// cut there and at the mark rounded down to 10 minutes, when the cache is
/// on; `None` when the range runs whole.
pub fn live_windows(
    ctx: &WindowContext,
    start: i64,
    end: i64,
    direction: Direction,
    now: i64,
) -> Option<Vec<Window>> {
    let mut w = windows(start, end, ctx.settings.interval_ns(), direction)?;
    if ctx.cache.is_some() {
        let mark = fresh_mark(now, ctx.lifetimes.freshness);
        cut(&mut w, mark.div_euclid(COARSE) * COARSE, direction);
        cut(&mut w, mark, direction);
    }
    Some(w)
}

/// `now − freshness` rounded down to the whole minute: everything before it
/// is closed.
pub fn fresh_mark(now: i64, freshness: Duration) -> i64 {
    let freshness = i64::try_from(freshness.as_nanos()).unwrap_or(i64::MAX);
    now.saturating_sub(freshness).div_euclid(MINUTE) * MINUTE
}

/// Cuts the window that holds `mark` strictly inside into `[start, mark)`
/// and `[mark, end)`, keeping the list in `direction` order.
fn cut(windows: &mut Vec<Window>, mark: i64, direction: Direction) {
    let Some(i) = windows.iter().position(|w| w.start < mark && mark < w.end) else {
        return;
    };
    let w = windows[i];
    let (old, fresh) = (
        Window {
            start: w.start,
            end: mark,
        },
        Window {
            start: mark,
            end: w.end,
        },
    );
    let (a, b) = match direction {
        Direction::Forward => (old, fresh),
        Direction::Backward => (fresh, old),
    };
    windows[i] = a;
    windows.insert(i + 1, b);
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 60 * MINUTE;
    const S: i64 = 1_000_000_000;

    #[test]
    fn the_mark_is_the_freshness_bound_rounded_down_to_the_minute() {
        let now = 10 * H + 7 * MINUTE + 13 * S + 5;
        let m = fresh_mark(now, Duration::from_secs(600));
        assert_eq!(m, 9 * H + 57 * MINUTE);
        assert!(m <= now - 600 * S);
        // Refreshes within one minute name the same mark.
        assert_eq!(fresh_mark(now + 40 * S, Duration::from_secs(600)), m);
        assert_eq!(
            fresh_mark(now + 47 * S, Duration::from_secs(600)),
            m + MINUTE
        );
    }

    #[test]
    fn the_live_window_is_cut_at_the_mark_in_both_directions() {
        let (start, end) = (7 * H + 30 * MINUTE, 10 * H + 5 * MINUTE);
        let mark = 9 * H + 55 * MINUTE;
        let mut fw = windows(start, end, H, Direction::Forward).unwrap_or_default();
        cut(&mut fw, mark, Direction::Forward);
        let starts: Vec<i64> = fw.iter().map(|w| w.start).collect();
        assert_eq!(starts, vec![start, 8 * H, 9 * H, mark, 10 * H]);
        assert!(fw.windows(2).all(|p| p[0].end == p[1].start));
        assert_eq!(fw.last().map(|w| w.end), Some(end));

        let mut bw = windows(start, end, H, Direction::Backward).unwrap_or_default();
        cut(&mut bw, mark, Direction::Backward);
        fw.reverse();
        assert_eq!(bw, fw, "backward walks the same pieces newest first");
    }

    #[test]
    fn the_closed_part_is_cut_at_ten_minutes_too() {
        let ctx = WindowContext {
            settings: crate::window::WindowSettings::default(),
            cache: Some(cache::Cache::new(cache::Settings { max_bytes: 1 << 20 })),
            lifetimes: cache::Lifetimes {
                ttl: Duration::from_secs(3600),
                live_ttl: Duration::ZERO,
                freshness: Duration::from_secs(600),
            },
            metrics: crate::telemetry::Metrics::new().expect("metrics"),
        };
        let now = 10 * H + 7 * MINUTE + 13 * S;
        let (start, end) = (7 * H + 3, now);
        let w = live_windows(&ctx, start, end, Direction::Forward, now).unwrap_or_default();
        let edges: Vec<i64> = w.iter().map(|w| w.start).collect();
        // Mark 09:57, coarse 09:50.
        let (mark, coarse) = (9 * H + 57 * MINUTE, 9 * H + 50 * MINUTE);
        assert_eq!(edges, vec![start, 8 * H, 9 * H, coarse, mark, 10 * H]);
        assert!(w.windows(2).all(|p| p[0].end == p[1].start));
        assert_eq!(w.last().map(|w| w.end), Some(end));
        // Every piece before the mark ends before now − freshness.
        assert!(
            w.iter()
                .filter(|x| x.end <= mark)
                .all(|x| x.end <= now - 600 * S)
        );
        // Without a cache nothing is cut.
        let off = WindowContext { cache: None, ..ctx };
        let w = live_windows(&off, start, end, Direction::Forward, now).unwrap_or_default();
        assert_eq!(w.len(), 4);
    }

    #[test]
    fn no_cut_on_a_boundary_or_outside_the_range() {
        let w0 = windows(0, 3 * H, H, Direction::Forward).unwrap_or_default();
        for mark in [0, H, 3 * H, 5 * H, -H] {
            let mut w = w0.clone();
            cut(&mut w, mark, Direction::Forward);
            assert_eq!(w, w0, "mark {mark}");
        }
    }

    #[test]
    fn a_mark_in_the_newest_window_makes_an_old_closed_piece_and_a_fresh_one() {
        let mut w = windows(0, 2 * H + 30 * MINUTE, H, Direction::Backward).unwrap_or_default();
        cut(&mut w, 2 * H + 20 * MINUTE, Direction::Backward);
        assert_eq!(
            w[..2],
            [
                Window {
                    start: 2 * H + 20 * MINUTE,
                    end: 2 * H + 30 * MINUTE
                },
                Window {
                    start: 2 * H,
                    end: 2 * H + 20 * MINUTE
                }
            ]
        );
    }
}

//! Cutting a metric `query_range` step grid into windows aligned to the step.
//!
//! A metric query's value at step `t` depends only on the logs in
//! `(t − offset − range, t − offset]`, so any set of steps can be evaluated
//! on its own and the pieces concatenated. Windows are `w` long, where `w` is
//! the split interval rounded up to a multiple of the step (and doubled
//! until a long range makes at most [`MAX_WINDOWS`] of them), and start at
//! multiples of `w` since the Unix epoch. A dashboard refreshing "the last
//! 6 hours" and Grafana's per-day splitting therefore ask for the same
//! closed windows again and again.
//!
//! Every window holds only the steps the request asks for: the first and
//! last are clipped to it, the ones between are whole (and so the same on
//! every refresh). A step outside the request would read logs the unsplit
//! query does not read, and a malformed line or a row budget there would
//! fail an answer that unsplit succeeds. A refresh whose `start` moved
//! therefore evaluates its first window again; the whole ones between come
//! from the cache.

use engine::metric::Grid;

/// Windows per request at most: beyond, each window holds more steps, so a
/// 30-day panel makes tens of backend calls, not hundreds.
pub const MAX_WINDOWS: i64 = 32;

/// One window: the steps it evaluates and caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricWindow {
    /// The steps evaluated; their times are multiples of the request step.
    pub grid: Grid,
    /// Whether the window is closed (all its data is older than the freshness margin).
    pub closed: bool,
}

/// The windows of `grid` (whose start is a multiple of its step), oldest
/// first, or `None` when the query should run whole: splitting is off, the
/// query is instant, or all its steps fall in one window.
///
/// `closed_before`: a window whose last step is at or before this time is
/// closed (`now − freshness − lookahead`, where the lookahead covers
/// negative offsets).
pub fn metric_windows(grid: Grid, interval: i64, closed_before: i64) -> Option<Vec<MetricWindow>> {
    if interval <= 0 || grid.len < 2 {
        return None;
    }
    let step = grid.step;
    let span = grid.last().saturating_sub(grid.start).saturating_add(step);
    // The interval rounded up to whole steps.
    let mut w = (interval.checked_add(step - 1)? / step).checked_mul(step)?;
    while span / w >= MAX_WINDOWS {
        w = w.checked_mul(2)?;
    }
    let first = grid.start.div_euclid(w);
    let last = grid.last().div_euclid(w);
    if first == last {
        return None;
    }
    // A window's steps must fit a grid's length.
    u32::try_from(w / step).ok()?;
    let mut out = Vec::with_capacity(usize::try_from(last - first + 1).unwrap_or(0));
    for k in first..=last {
        let lo = k.checked_mul(w)?;
        // The window's last step (`w` is whole steps).
        let hi = lo.checked_add(w - step)?;
        // Only the steps the request asks for: a step outside it would read
        // logs the unsplit query does not (whose errors and row counts
        // would then fail or cut the answer).
        let grid = Grid::range(lo.max(grid.start), hi.min(grid.last()), step);
        out.push(MetricWindow {
            grid,
            closed: grid.last() <= closed_before,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const M: i64 = 60 * S;
    const H: i64 = 60 * M;

    fn times(g: &Grid) -> Vec<i64> {
        (0..g.len).map(|i| g.time(i)).collect()
    }

    #[test]
    fn instant_short_and_unsplit_queries_run_whole() {
        assert_eq!(metric_windows(Grid::instant(5 * H), H, i64::MAX), None);
        assert_eq!(metric_windows(Grid::range(0, H - M, M), H, i64::MAX), None);
        assert_eq!(metric_windows(Grid::range(0, 5 * H, M), 0, i64::MAX), None);
    }

    #[test]
    fn windows_hold_exactly_the_requested_steps() {
        // 00:30 .. 03:10 every minute; everything is closed.
        let grid = Grid::range(30 * M, 3 * H + 10 * M, M);
        let w = metric_windows(grid, H, i64::MAX).unwrap_or_default();
        assert_eq!(w.len(), 4);
        assert!(w.iter().all(|x| x.closed));
        // The first and last are clipped to the request, the others whole.
        assert_eq!(w[0].grid, Grid::range(30 * M, H - M, M));
        assert_eq!(w[1].grid, Grid::range(H, 2 * H - M, M));
        assert_eq!(w[2].grid, Grid::range(2 * H, 3 * H - M, M));
        assert_eq!(w[3].grid, Grid::range(3 * H, 3 * H + 10 * M, M));
        // Every requested step once, no other.
        let covered: Vec<i64> = w.iter().flat_map(|x| times(&x.grid)).collect();
        assert_eq!(covered, times(&grid));
    }

    #[test]
    fn a_step_that_does_not_divide_the_interval_keeps_the_request_steps() {
        // 45 s steps, 7 min interval: windows of 450 s (ten steps).
        let step = 45 * S;
        let grid = Grid::range(1_000 * step, 1_100 * step, step);
        let w = metric_windows(grid, 7 * M, i64::MAX).unwrap_or_default();
        let covered: Vec<i64> = w.iter().flat_map(|x| times(&x.grid)).collect();
        assert_eq!(covered, times(&grid));
        assert!(w[1..w.len() - 1].iter().all(|x| x.grid.len == 10));
    }

    #[test]
    fn the_live_window_stops_at_the_request_end() {
        let grid = Grid::range(30 * M, 2 * H + 10 * M, M);
        // Data after 01:59 is fresh.
        let w = metric_windows(grid, H, H + 59 * M).unwrap_or_default();
        assert_eq!(w.len(), 3);
        assert!(w[0].closed && w[1].closed);
        assert!(!w[2].closed);
        assert_eq!(w[2].grid, Grid::range(2 * H, 2 * H + 10 * M, M));
        // A window that ends after the fresh mark is live.
        let w = metric_windows(grid, H, H + 58 * M).unwrap_or_default();
        assert!(!w[1].closed);
        assert_eq!(w[1].grid, Grid::range(H, 2 * H - M, M));
        assert!(w[0].closed);
    }

    #[test]
    fn a_step_longer_than_the_interval_rounds_windows_up_to_the_step() {
        // 1h interval, 25 min step: windows of 75 min (three steps).
        let step = 25 * M;
        let grid = Grid::range(0, 10 * step, step);
        let w = metric_windows(grid, H, i64::MAX).unwrap_or_default();
        assert!(w.iter().all(|x| x.grid.start % (3 * step) == 0));
        assert!(w[..3].iter().all(|x| x.grid.len == 3));
        // The last is clipped to the request's eleventh step.
        assert_eq!(w[3].grid, Grid::range(9 * step, 10 * step, step));
        assert_eq!(w.len(), 4);
    }

    #[test]
    fn windows_near_the_end_of_time_do_not_overflow() {
        let step = 7 * S;
        let end = i64::MAX - i64::MAX.rem_euclid(step);
        // The last window would end past i64::MAX: the query runs whole.
        assert_eq!(
            metric_windows(Grid::range(end - 3 * H, end, step), H, i64::MAX),
            None
        );
    }

    #[test]
    fn long_ranges_make_at_most_max_windows() {
        // 30 days at 1 min: 720 one-hour windows would be too many.
        let grid = Grid::range(0, 30 * 24 * H, M);
        let w = metric_windows(grid, H, i64::MAX).unwrap_or_default();
        assert!(w.len() as i64 <= MAX_WINDOWS + 1, "{} windows", w.len());
        // Window lengths are the interval doubled, so boundaries stay aligned to 1 h.
        assert!(w.iter().all(|x| x.grid.start % H == 0));
        assert_eq!(w[1].grid.len as i64 * M, 32 * H);
    }
}

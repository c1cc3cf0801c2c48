//! Merging window answers into the answer of the whole range.
//!
//! Windows arrive in direction order (newest first for backward) and each
//! holds up to `limit` entries in direction order, so the first `limit`
//! entries of the concatenation are the first `limit` of the whole range,
//! which is what an unsplit query keeps. Streams are then ordered by Loki's
//! label-set string, entries inside a stream in direction order, as the
//! encoders do for one query.

use std::collections::BTreeMap;

use engine::answer::{LogAnswer, StoredView};
use engine::direction::Direction;
use engine::labels::write_label_string;
use engine::tie::{TENANT_LABEL, order_key};

/// How many entries of `w` to keep from each stream so that exactly `want`
/// entries are kept, the first ones in direction order.
///
/// Within a stream entries are already in direction order, so the kept ones
/// are a prefix of it. Entries with equal timestamps are kept in Loki's
/// order (their base stream's hash, [`engine::tie`]), as the window's own
/// fetch and an unsplit query keep them; entries of one base stream in
/// different streams then keep the label-string order of their streams.
pub fn take_first(w: &StoredView<'_>, want: usize, direction: Direction) -> Vec<usize> {
    if w.len() <= want {
        return w.streams().map(|s| s.len()).collect();
    }
    let mut all: Vec<(i64, u64, &str, usize)> = Vec::with_capacity(w.len());
    for (si, s) in w.streams().enumerate() {
        let tenant = s
            .labels()
            .find(|&(n, _)| n == TENANT_LABEL)
            .map_or("", |(_, v)| v);
        all.extend(s.entries().map(|e| (e.ts, e.origin(), tenant, si)));
    }
    // Stable: within a stream, and for equal keys, the order stays.
    all.sort_by_key(|&(ts, origin, tenant, _)| order_key(direction, ts, origin, tenant));
    let mut keep = vec![0; w.streams().len()];
    for &(_, _, _, si) in all.iter().take(want) {
        keep[si] += 1;
    }
    keep
}

/// The merged answer of `windows` (in direction order): the first `limit`
/// entries, streams in label-string order, `stats.splits` the number of
/// windows used. The windows are read where they are stored (mostly the
/// cache's own bytes): only the merged answer is a copy.
pub fn merge(
    windows: &[StoredView<'_>],
    limit: usize,
    direction: Direction,
    categorize: bool,
) -> LogAnswer {
    // Label string → the (window, stream, entries kept) that make it up.
    let mut streams: BTreeMap<Vec<u8>, Vec<(usize, usize, usize)>> = BTreeMap::new();
    let mut out = LogAnswer::new(categorize);
    let mut taken = 0;
    let mut used = 0;
    for (wi, w) in windows.iter().enumerate() {
        if taken >= limit {
            break;
        }
        used += 1;
        for warning in w.warnings() {
            if !out.warnings.contains(warning) {
                out.warnings.push(warning.clone());
            }
        }
        out.stats.add(&w.stats());
        let keep = take_first(w, limit - taken, direction);
        for (si, (s, n)) in w.streams().zip(keep).enumerate() {
            if n == 0 {
                continue;
            }
            let mut key = Vec::new();
            write_label_string(&mut key, s.labels());
            streams.entry(key).or_default().push((wi, si, n));
            taken += n;
        }
    }
    out.stats.splits = used as u64;
    for parts in streams.values() {
        out.begin_stream();
        let (wi, si, _) = parts[0];
        for (n, v) in windows[wi].stream(si).labels() {
            out.push_stream_label(n, v);
        }
        for &(wi, si, n) in parts {
            for e in windows[wi].stream(si).entries().take(n) {
                out.push_stored_entry(&e);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::answer::{LogStats, StoredLog};

    fn stored(a: &LogAnswer) -> StoredLog {
        StoredLog::new(a.to_bytes()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn view(w: &StoredLog) -> StoredView<'_> {
        w.view().unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`merge`] of answers, through their stored form as windows are.
    fn merged(
        windows: &[LogAnswer],
        limit: usize,
        direction: Direction,
        categorize: bool,
    ) -> LogAnswer {
        let stored: Vec<StoredLog> = windows.iter().map(stored).collect();
        let views: Vec<StoredView<'_>> = stored.iter().map(view).collect();
        merge(&views, limit, direction, categorize)
    }

    fn first(w: &LogAnswer, want: usize, direction: Direction) -> Vec<usize> {
        take_first(&view(&stored(w)), want, direction)
    }

    fn window(streams: &[(&str, &[i64])]) -> LogAnswer {
        let mut a = LogAnswer::new(false);
        for (app, entries) in streams {
            a.begin_stream();
            a.push_stream_label("app", app);
            for ts in *entries {
                a.push_entry(*ts, &ts.to_string());
            }
        }
        a.stats = LogStats {
            lines: 10,
            ..LogStats::default()
        };
        a
    }

    fn result(a: &LogAnswer) -> Vec<(String, Vec<i64>)> {
        a.streams()
            .map(|s| {
                let app = s.labels().map(|(_, v)| v).collect::<String>();
                (app, s.entries().map(|e| e.ts).collect())
            })
            .collect()
    }

    #[test]
    fn backward_limit_ending_mid_window_keeps_the_newest_across_streams() {
        let newest = window(&[("a", &[90, 70]), ("b", &[80])]);
        let older = window(&[("a", &[40, 20]), ("b", &[50, 30, 10])]);
        let m = merged(&[newest, older], 5, Direction::Backward, false);
        assert_eq!(
            result(&m),
            vec![("a".into(), vec![90, 70, 40]), ("b".into(), vec![80, 50])]
        );
        assert_eq!(m.len(), 5);
        assert_eq!(m.stats.lines, 20);
        assert_eq!(m.stats.splits, 2);
    }

    #[test]
    fn windows_past_the_limit_are_not_used() {
        let w1 = window(&[("a", &[1, 2])]);
        let w2 = window(&[("a", &[3])]);
        let m = merged(&[w1, w2], 2, Direction::Forward, true);
        assert_eq!(m.stats.splits, 1);
        assert!(m.categorized);
        assert_eq!(result(&m), vec![("a".into(), vec![1, 2])]);
    }

    #[test]
    fn take_first_counts_a_prefix_per_stream() {
        let w = window(&[("a", &[1, 5]), ("b", &[2, 3, 9])]);
        assert_eq!(first(&w, 3, Direction::Forward), vec![1, 2]);
        let w = window(&[("a", &[5, 1]), ("b", &[9, 3, 2])]);
        assert_eq!(first(&w, 2, Direction::Backward), vec![1, 1]);
        assert_eq!(first(&w, 10, Direction::Backward), vec![2, 3]);
        assert_eq!(first(&w, 0, Direction::Backward), vec![0, 0]);
    }

    #[test]
    fn warnings_are_kept_once() {
        let mut w = window(&[]);
        w.warnings = vec!["w".to_owned()];
        let m = merged(&[w.clone(), w], 10, Direction::Forward, false);
        assert_eq!(m.warnings, ["w"]);
    }

    #[test]
    fn streams_are_ordered_by_label_string_across_windows() {
        let w1 = window(&[("b", &[4])]);
        let w2 = window(&[("a", &[3]), ("b", &[2])]);
        let m = merged(&[w1, w2], 10, Direction::Backward, false);
        assert_eq!(
            result(&m),
            vec![("a".into(), vec![3]), ("b".into(), vec![4, 2])]
        );
    }

    /// Entries of one timestamp are cut in their base streams' hash order,
    /// not in label order: a merge keeps what the window's fetch (and an
    /// unsplit query) keeps.
    #[test]
    fn a_cut_among_equal_timestamps_follows_the_stream_hash() {
        let mut w = LogAnswer::new(false);
        for (app, origin) in [("a", 30u64), ("b", 10), ("c", 20)] {
            w.begin_stream();
            w.push_stream_label("app", app);
            w.push_entry_of(origin, 7, app);
        }
        for direction in [Direction::Backward, Direction::Forward] {
            assert_eq!(first(&w, 1, direction), vec![0, 1, 0]);
            assert_eq!(first(&w, 2, direction), vec![0, 1, 1]);
        }
        let newer = window(&[("z", &[9])]);
        let m = merged(&[newer, w], 2, Direction::Backward, false);
        assert_eq!(
            result(&m),
            vec![("b".into(), vec![7]), ("z".into(), vec![9])]
        );
    }
}

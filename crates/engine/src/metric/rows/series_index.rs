//! The series of a proxy-evaluated range aggregation, found by each row's
//! borrowed labels: a label set is copied only when its series is new.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::metric::series::Labels;

/// A sample: its time, value and the line's bytes.
pub(super) type Sample = (i64, f64, f64);

/// The series of one extraction, each with its samples: found by the
/// row's borrowed labels, owned only when a series is new, and handed out
/// in label order (so later float sums are the same on every run).
#[derive(Default)]
pub(super) struct SeriesIndex {
    /// Hash of a label set → the series with that hash.
    by_hash: HashMap<u64, Vec<usize>, foldhash::fast::FixedState>,
    series: Vec<(Labels, Vec<Sample>)>,
}

impl SeriesIndex {
    /// The samples of the series `labels` names (sorted, one per name).
    pub(super) fn samples(&mut self, labels: &[(Cow<'_, str>, Cow<'_, str>)]) -> &mut Vec<Sample> {
        use std::hash::{BuildHasher as _, Hash as _, Hasher as _};
        let mut h = self.by_hash.hasher().build_hasher();
        for (n, v) in labels {
            n.as_ref().hash(&mut h);
            v.as_ref().hash(&mut h);
        }
        let same = |owned: &Labels| {
            owned.len() == labels.len()
                && owned
                    .iter()
                    .zip(labels)
                    .all(|((a, b), (n, v))| a == n && b == v)
        };
        let candidates = self.by_hash.entry(h.finish()).or_default();
        let i = match candidates.iter().find(|&&i| same(&self.series[i].0)) {
            Some(&i) => i,
            None => {
                let owned = labels
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect();
                self.series.push((owned, Vec::new()));
                candidates.push(self.series.len() - 1);
                self.series.len() - 1
            }
        };
        &mut self.series[i].1
    }

    /// The series in label order.
    pub(super) fn into_sorted(mut self) -> Vec<(Labels, Vec<Sample>)> {
        self.series.sort_by(|a, b| a.0.cmp(&b.0));
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row finds the series of an equal label set, whichever row made
    /// it; series come out in label order, as a map keyed by labels gives.
    #[test]
    fn series_are_found_by_borrowed_labels_and_handed_out_in_label_order() {
        let mut idx = SeriesIndex::default();
        let l = |pairs: &[(&'static str, &'static str)]| -> Vec<(Cow<'static, str>, Cow<'static, str>)> {
            pairs
                .iter()
                .map(|&(n, v)| (Cow::Borrowed(n), Cow::Borrowed(v)))
                .collect()
        };
        idx.samples(&l(&[("b", "1")])).push((1, 1.0, 0.0));
        idx.samples(&l(&[("a", "2"), ("c", "")]))
            .push((2, 1.0, 0.0));
        let owned = String::from("1");
        idx.samples(&[(Cow::Borrowed("b"), Cow::Owned(owned))])
            .push((3, 1.0, 0.0));
        idx.samples(&l(&[("a", "2")])).push((4, 1.0, 0.0));
        idx.samples(&[]).push((5, 1.0, 0.0));
        let out = idx.into_sorted();
        let got: Vec<(Labels, Vec<i64>)> = out
            .into_iter()
            .map(|(l, s)| (l, s.iter().map(|x| x.0).collect()))
            .collect();
        let labels = |p: &[(&str, &str)]| -> Labels {
            p.iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            got,
            vec![
                (labels(&[]), vec![5]),
                (labels(&[("a", "2")]), vec![4]),
                (labels(&[("a", "2"), ("c", "")]), vec![2]),
                (labels(&[("b", "1")]), vec![1, 3]),
            ]
        );
    }
}

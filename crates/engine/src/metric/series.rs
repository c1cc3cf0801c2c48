//! Typed series: a label set plus samples at grid steps.

use std::cmp::Ordering;

/// A label set sorted by name; no empty values.
pub type Labels = Vec<(String, String)>;

/// One sample: the grid step index and the value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Index into the [`crate::metric::Grid`].
    pub step: u32,
    /// The value.
    pub v: f64,
}

/// A series: labels and samples in ascending step order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// The label set, sorted by name.
    pub labels: Labels,
    /// Samples, ascending by step, at most one per step.
    pub points: Vec<Point>,
}

impl Series {
    /// The value at `step`, if the series has one.
    pub fn at(&self, step: u32) -> Option<f64> {
        self.points
            .binary_search_by_key(&step, |p| p.step)
            .ok()
            .map(|i| self.points[i].v)
    }
}

/// Series over the grid (a range vector evaluated at every step).
pub type Matrix = Vec<Series>;

/// The value of a metric expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number literal (or an operation between literals), the same at every step.
    Scalar(f64),
    /// Instant vectors at every step.
    Vector(Matrix),
}

/// Prometheus' `labels.Compare`: pairwise by name, then value; a prefix sorts first.
pub fn compare_labels(a: &Labels, b: &Labels) -> Ordering {
    for ((an, av), (bn, bv)) in a.iter().zip(b.iter()) {
        match an.cmp(bn).then_with(|| av.cmp(bv)) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// Sorts `labels` by name and drops empty values, keeping the last of duplicates.
pub fn normalize(mut labels: Labels) -> Labels {
    labels.retain(|(_, v)| !v.is_empty());
    sorted(labels)
}

/// Sorts by name, a later duplicate winning, and keeps empty values: a
/// label a parser set to `""` (`logfmt --keep-empty`, a missing
/// `json a="x.y"` path, an unmatched `regexp` group) stays in Loki's series
/// (`{method=""}`), unlike an absent VictoriaLogs field.
pub fn sorted(mut labels: Labels) -> Labels {
    sort_dedup(&mut labels);
    labels
}

/// [`sorted`] in place, for labels owned or borrowed: sorted by name
/// (stably), one per name, with the value that came last.
pub fn sort_dedup<N: Ord, V: Default>(labels: &mut Vec<(N, V)>) {
    labels.sort_by(|a, b| a.0.cmp(&b.0));
    labels.dedup_by(|later, earlier| {
        if later.0 == earlier.0 {
            earlier.1 = std::mem::take(&mut later.1);
            true
        } else {
            false
        }
    });
}

/// Samples of `m` regrouped by step: `out[step]` lists `(series index, value)`.
pub fn by_step(m: &Matrix, len: u32) -> Vec<Vec<(u32, f64)>> {
    let mut out: Vec<Vec<(u32, f64)>> = vec![Vec::new(); len as usize];
    for (i, s) in m.iter().enumerate() {
        for p in &s.points {
            if let Some(slot) = out.get_mut(p.step as usize) {
                slot.push((i as u32, p.v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn compare_like_prometheus() {
        assert_eq!(
            compare_labels(&l(&[("a", "1")]), &l(&[("a", "1"), ("b", "2")])),
            Ordering::Less
        );
        assert_eq!(
            compare_labels(&l(&[("a", "2")]), &l(&[("a", "10")])),
            Ordering::Greater
        );
        assert_eq!(
            compare_labels(&l(&[("b", "1")]), &l(&[("a", "9")])),
            Ordering::Greater
        );
    }

    #[test]
    fn normalize_sorts_and_drops_empty() {
        assert_eq!(
            normalize(l(&[("b", "1"), ("a", ""), ("c", "x"), ("b", "2")])),
            l(&[("b", "2"), ("c", "x")])
        );
    }

    #[test]
    fn at_finds_steps() {
        let s = Series {
            labels: vec![],
            points: vec![Point { step: 1, v: 2.0 }, Point { step: 4, v: 3.0 }],
        };
        assert_eq!(s.at(4), Some(3.0));
        assert_eq!(s.at(2), None);
        let m = vec![s];
        let bs = by_step(&m, 5);
        assert_eq!(bs[1], vec![(0, 2.0)]);
        assert!(bs[0].is_empty());
    }
}

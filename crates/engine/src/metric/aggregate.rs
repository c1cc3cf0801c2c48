//! Vector aggregations (`sum`, `avg`, `topk`, …) per step, with `by`/`without`.
//!
//! Accumulation follows Prometheus (which Loki reuses): `avg` is an
//! incremental mean, `stddev`/`stdvar` use Welford's update, `min`/`max`
//! replace a NaN. `topk`/`bottomk` pick per step and keep each series' own
//! labels; `sort`/`sort_desc` keep every sample (their order only matters
//! for instant answers, see [`crate::metric::eval`]).

use std::collections::HashMap;

use logql_parser::{Grouping, VectorOp};

use super::grid::Grid;
use super::series::{Labels, Matrix, Point, Series, by_step, compare_labels};

/// The labels of a series' group under `grouping` (no grouping: the empty set).
pub fn group_labels(labels: &Labels, grouping: Option<&Grouping>) -> Labels {
    match grouping {
        None => Vec::new(),
        Some(g) => labels
            .iter()
            .filter(|(n, _)| g.labels.contains(n) != g.without)
            .cloned()
            .collect(),
    }
}

#[derive(Debug, Clone, Copy)]
struct Acc {
    value: f64,
    mean: f64,
    count: f64,
}

/// Aggregates `m` per step.
pub fn aggregate(
    op: VectorOp,
    param: Option<i64>,
    grouping: Option<&Grouping>,
    m: Matrix,
    grid: &Grid,
) -> Matrix {
    match op {
        VectorOp::Topk | VectorOp::Bottomk | VectorOp::ApproxTopk => top(
            op != VectorOp::Bottomk,
            param.unwrap_or(0),
            grouping,
            m,
            grid,
        ),
        VectorOp::Sort | VectorOp::SortDesc => m,
        _ => fold(op, grouping, &m, grid),
    }
}

fn fold(op: VectorOp, grouping: Option<&Grouping>, m: &Matrix, grid: &Grid) -> Matrix {
    let mut groups: Vec<Series> = Vec::new();
    let mut index: HashMap<Labels, usize> = HashMap::new();
    let group_of: Vec<usize> = m
        .iter()
        .map(|s| {
            let key = group_labels(&s.labels, grouping);
            *index.entry(key.clone()).or_insert_with(|| {
                groups.push(Series {
                    labels: key,
                    points: Vec::new(),
                });
                groups.len() - 1
            })
        })
        .collect();
    let mut accs: Vec<Option<Acc>> = vec![None; groups.len()];
    let mut touched: Vec<usize> = Vec::new();
    for (step, samples) in by_step(m, grid.len).into_iter().enumerate() {
        for (si, v) in samples {
            let g = group_of[si as usize];
            match &mut accs[g] {
                None => {
                    touched.push(g);
                    accs[g] = Some(Acc {
                        value: match op {
                            VectorOp::Count => 1.0,
                            VectorOp::Stddev | VectorOp::Stdvar => 0.0,
                            _ => v,
                        },
                        mean: v,
                        count: 1.0,
                    });
                }
                Some(a) => {
                    a.count += 1.0;
                    match op {
                        VectorOp::Sum => a.value += v,
                        VectorOp::Count => a.value += 1.0,
                        VectorOp::Max if a.value < v || a.value.is_nan() => a.value = v,
                        VectorOp::Min if a.value > v || a.value.is_nan() => a.value = v,
                        VectorOp::Avg => a.mean += v / a.count - a.mean / a.count,
                        VectorOp::Stddev | VectorOp::Stdvar => {
                            let delta = v - a.mean;
                            a.mean += delta / a.count;
                            a.value += delta * (v - a.mean);
                        }
                        _ => {}
                    }
                }
            }
        }
        for &g in &touched {
            if let Some(a) = accs[g].take() {
                let v = match op {
                    VectorOp::Avg => a.mean,
                    VectorOp::Stdvar => a.value / a.count,
                    VectorOp::Stddev => (a.value / a.count).sqrt(),
                    _ => a.value,
                };
                groups[g].points.push(Point {
                    step: step as u32,
                    v,
                });
            }
        }
        touched.clear();
    }
    groups.retain(|g| !g.points.is_empty());
    groups
}

fn top(largest: bool, k: i64, grouping: Option<&Grouping>, mut m: Matrix, grid: &Grid) -> Matrix {
    if k < 1 {
        return Vec::new();
    }
    let k = k as usize;
    let group_of: Vec<Labels> = m
        .iter()
        .map(|s| group_labels(&s.labels, grouping))
        .collect();
    let mut keep: Vec<Vec<Point>> = vec![Vec::new(); m.len()];
    let mut groups: HashMap<&Labels, Vec<(u32, f64)>> = HashMap::new();
    for (step, samples) in by_step(&m, grid.len).into_iter().enumerate() {
        groups.clear();
        for (si, v) in samples {
            groups
                .entry(&group_of[si as usize])
                .or_default()
                .push((si, v));
        }
        for members in groups.values_mut() {
            // Prometheus' heap order: NaN ranks below every number for both directions.
            // Prometheus' heap order: NaN ranks below every number for both
            // directions; ties keep the series that comes first in label order.
            members.sort_by(|a, b| {
                let o = if largest {
                    rank(b.1).total_cmp(&rank(a.1))
                } else {
                    rank_low(a.1).total_cmp(&rank_low(b.1))
                };
                o.then_with(|| compare_labels(&m[a.0 as usize].labels, &m[b.0 as usize].labels))
            });
            for &(si, v) in members.iter().take(k) {
                keep[si as usize].push(Point {
                    step: step as u32,
                    v,
                });
            }
        }
    }
    for (s, pts) in m.iter_mut().zip(keep) {
        s.points = pts;
    }
    m.retain(|s| !s.points.is_empty());
    m
}

fn rank(v: f64) -> f64 {
    if v.is_nan() { f64::NEG_INFINITY } else { v }
}

fn rank_low(v: f64) -> f64 {
    if v.is_nan() { f64::INFINITY } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(labels: &[(&str, &str)], pts: &[(u32, f64)]) -> Series {
        Series {
            labels: labels
                .iter()
                .map(|(a, b)| ((*a).into(), (*b).into()))
                .collect(),
            points: pts.iter().map(|&(step, v)| Point { step, v }).collect(),
        }
    }

    fn by(l: &[&str]) -> Grouping {
        Grouping {
            without: false,
            labels: l.iter().map(|s| (*s).into()).collect(),
        }
    }

    fn data() -> Matrix {
        vec![
            s(&[("app", "a"), ("pod", "1")], &[(0, 1.0), (1, 10.0)]),
            s(&[("app", "a"), ("pod", "2")], &[(0, 3.0)]),
            s(&[("app", "b"), ("pod", "1")], &[(0, 5.0), (1, 2.0)]),
        ]
    }

    fn vals(m: &Matrix) -> Vec<(Labels, Vec<(u32, f64)>)> {
        let mut out: Vec<_> = m
            .iter()
            .map(|s| {
                (
                    s.labels.clone(),
                    s.points.iter().map(|p| (p.step, p.v)).collect(),
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    fn l(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(a, b)| ((*a).into(), (*b).into()))
            .collect()
    }

    const G: Grid = Grid {
        start: 0,
        step: 1,
        len: 2,
    };

    #[test]
    fn sum_avg_count_by() {
        let g = by(&["app"]);
        assert_eq!(
            vals(&aggregate(VectorOp::Sum, None, Some(&g), data(), &G)),
            vec![
                (l(&[("app", "a")]), vec![(0, 4.0), (1, 10.0)]),
                (l(&[("app", "b")]), vec![(0, 5.0), (1, 2.0)])
            ]
        );
        assert_eq!(
            vals(&aggregate(VectorOp::Avg, None, Some(&g), data(), &G))[0].1,
            vec![(0, 2.0), (1, 10.0)]
        );
        assert_eq!(
            vals(&aggregate(VectorOp::Count, None, None, data(), &G)),
            vec![(l(&[]), vec![(0, 3.0), (1, 2.0)])]
        );
    }

    #[test]
    fn min_max_stddev_without() {
        let g = Grouping {
            without: true,
            labels: vec!["app".into()],
        };
        let max = vals(&aggregate(VectorOp::Max, None, Some(&g), data(), &G));
        assert_eq!(
            max,
            vec![
                (l(&[("pod", "1")]), vec![(0, 5.0), (1, 10.0)]),
                (l(&[("pod", "2")]), vec![(0, 3.0)])
            ]
        );
        let min = vals(&aggregate(VectorOp::Min, None, None, data(), &G));
        assert_eq!(min[0].1, vec![(0, 1.0), (1, 2.0)]);
        // step 0: {1, 3, 5} mean 3, var 8/3; step 1: {10, 2} var 16
        let var = vals(&aggregate(VectorOp::Stdvar, None, None, data(), &G));
        assert!((var[0].1[0].1 - 8.0 / 3.0).abs() < 1e-12);
        assert_eq!(var[0].1[1].1, 16.0);
        let sd = vals(&aggregate(VectorOp::Stddev, None, None, data(), &G));
        assert_eq!(sd[0].1[1].1, 4.0);
    }

    #[test]
    fn topk_per_step_keeps_series_labels() {
        let top = vals(&aggregate(VectorOp::Topk, Some(1), None, data(), &G));
        assert_eq!(
            top,
            vec![
                (l(&[("app", "a"), ("pod", "1")]), vec![(1, 10.0)]),
                (l(&[("app", "b"), ("pod", "1")]), vec![(0, 5.0)]),
            ]
        );
        let bottom = vals(&aggregate(
            VectorOp::Bottomk,
            Some(1),
            Some(&by(&["app"])),
            data(),
            &G,
        ));
        assert_eq!(
            bottom,
            vec![
                (l(&[("app", "a"), ("pod", "1")]), vec![(0, 1.0), (1, 10.0)]),
                (l(&[("app", "b"), ("pod", "1")]), vec![(0, 5.0), (1, 2.0)]),
            ]
        );
        assert!(aggregate(VectorOp::Topk, Some(0), None, data(), &G).is_empty());
    }
}

//! Binary operators: arithmetic and comparisons (with `bool`), vector
//! matching (`on`/`ignoring`, `group_left`/`group_right`) and the set
//! operators `and`, `or`, `unless`, with Prometheus' semantics as Loki uses them.

use std::collections::{HashMap, HashSet};

use logql_parser::{BinaryModifier, BinaryOp, VectorMatching};

use super::error::EngineError;
use super::grid::Grid;
use super::series::{Labels, Matrix, Point, Series, Value, by_step};
use crate::labels::write_label_string;

/// Applies `op` between two evaluated operands.
///
/// # Errors
/// [`EngineError::DuplicateMatch`] when vector matching is ambiguous,
/// [`EngineError::Unsupported`] for set operators with a scalar operand.
pub fn apply(
    op: BinaryOp,
    modifier: &BinaryModifier,
    lhs: Value,
    rhs: Value,
    grid: &Grid,
) -> Result<Value, EngineError> {
    let b = modifier.return_bool;
    match (lhs, rhs) {
        (Value::Scalar(l), Value::Scalar(r)) => {
            let v = match scalar_op(op, l, r) {
                Some((v, _)) if is_comparison(op) => v,
                Some((v, _)) => v,
                None => return Err(set_with_scalar()),
            };
            Ok(Value::Scalar(v))
        }
        (Value::Vector(m), Value::Scalar(s)) => {
            if is_set(op) {
                return Err(set_with_scalar());
            }
            Ok(Value::Vector(map_points(m, |v| elem(op, v, s, v, b))))
        }
        (Value::Scalar(s), Value::Vector(m)) => {
            if is_set(op) {
                return Err(set_with_scalar());
            }
            Ok(Value::Vector(map_points(m, |v| elem(op, s, v, v, b))))
        }
        (Value::Vector(l), Value::Vector(r)) => {
            let matching = modifier.matching.as_ref();
            Ok(Value::Vector(match op {
                BinaryOp::And | BinaryOp::Or | BinaryOp::Unless => set_op(op, matching, l, r, grid),
                _ => vector_op(op, b, matching, l, r, grid)?,
            }))
        }
    }
}

fn set_with_scalar() -> EngineError {
    EngineError::Unsupported("set operators are not allowed between a vector and a scalar".into())
}

fn is_set(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Unless)
}

fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Neq | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Lt | BinaryOp::Le
    )
}

/// `(result, keep)`: arithmetic always keeps; comparisons return 0/1 and whether they hold.
fn scalar_op(op: BinaryOp, l: f64, r: f64) -> Option<(f64, bool)> {
    let arith = |v: f64| Some((v, true));
    let cmp = |h: bool| Some((f64::from(h), h));
    match op {
        BinaryOp::Add => arith(l + r),
        BinaryOp::Sub => arith(l - r),
        BinaryOp::Mul => arith(l * r),
        // Loki guards division by zero: NaN, never ±Inf.
        BinaryOp::Div if r == 0.0 => arith(f64::NAN),
        BinaryOp::Div => arith(l / r),
        // Go's math.Mod: the result has the dividend's sign, like Rust's `%`.
        BinaryOp::Mod => arith(l % r),
        BinaryOp::Pow => arith(l.powf(r)),
        BinaryOp::Eq => cmp(l == r),
        BinaryOp::Neq => cmp(l != r),
        BinaryOp::Gt => cmp(l > r),
        BinaryOp::Ge => cmp(l >= r),
        BinaryOp::Lt => cmp(l < r),
        BinaryOp::Le => cmp(l <= r),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Unless => None,
    }
}

/// One sample's result where a vector is involved: a filtering comparison keeps `kept`.
fn elem(op: BinaryOp, l: f64, r: f64, kept: f64, return_bool: bool) -> Option<f64> {
    let (v, keep) = scalar_op(op, l, r)?;
    if !is_comparison(op) {
        Some(v)
    } else if return_bool {
        Some(f64::from(keep))
    } else if keep {
        Some(kept)
    } else {
        None
    }
}

fn map_points(mut m: Matrix, f: impl Fn(f64) -> Option<f64>) -> Matrix {
    for s in &mut m {
        s.points = s
            .points
            .iter()
            .filter_map(|p| f(p.v).map(|v| Point { step: p.step, v }))
            .collect();
    }
    m.retain(|s| !s.points.is_empty());
    m
}

/// The matching signature of a label set.
pub fn signature(labels: &Labels, matching: Option<&VectorMatching>) -> Labels {
    match matching {
        None => labels.clone(),
        Some(vm) => labels
            .iter()
            .filter(|(n, _)| vm.labels.contains(n) == vm.on)
            .cloned()
            .collect(),
    }
}

fn set_op(
    op: BinaryOp,
    matching: Option<&VectorMatching>,
    l: Matrix,
    r: Matrix,
    grid: &Grid,
) -> Matrix {
    let lsig: Vec<Labels> = l.iter().map(|s| signature(&s.labels, matching)).collect();
    let rsig: Vec<Labels> = r.iter().map(|s| signature(&s.labels, matching)).collect();
    let lsteps = by_step(&l, grid.len);
    let rsteps = by_step(&r, grid.len);
    let mut lkeep: Vec<Vec<Point>> = vec![Vec::new(); l.len()];
    let mut rkeep: Vec<Vec<Point>> = vec![Vec::new(); r.len()];
    let mut set: HashSet<&Labels> = HashSet::new();
    for step in 0..grid.len as usize {
        set.clear();
        match op {
            BinaryOp::And | BinaryOp::Unless => {
                set.extend(rsteps[step].iter().map(|(i, _)| &rsig[*i as usize]));
                for &(i, v) in &lsteps[step] {
                    if set.contains(&lsig[i as usize]) == (op == BinaryOp::And) {
                        lkeep[i as usize].push(Point {
                            step: step as u32,
                            v,
                        });
                    }
                }
            }
            _ => {
                set.extend(lsteps[step].iter().map(|(i, _)| &lsig[*i as usize]));
                for &(i, v) in &lsteps[step] {
                    lkeep[i as usize].push(Point {
                        step: step as u32,
                        v,
                    });
                }
                for &(i, v) in &rsteps[step] {
                    if !set.contains(&rsig[i as usize]) {
                        rkeep[i as usize].push(Point {
                            step: step as u32,
                            v,
                        });
                    }
                }
            }
        }
    }
    let mut out: HashMap<Labels, Vec<Point>> = HashMap::new();
    for (s, pts) in l.into_iter().zip(lkeep).chain(r.into_iter().zip(rkeep)) {
        if !pts.is_empty() {
            out.entry(s.labels).or_default().extend(pts);
        }
    }
    out.into_iter()
        .map(|(labels, mut points)| {
            points.sort_by_key(|p| p.step);
            points.dedup_by_key(|p| p.step);
            Series { labels, points }
        })
        .collect()
}

fn label_text(l: &Labels) -> String {
    let mut out = Vec::new();
    write_label_string(&mut out, l.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    String::from_utf8_lossy(&out).into_owned()
}

/// The result labels of a matched pair (Prometheus' `resultMetric`), `many` being the many side.
fn result_labels(
    many: &Labels,
    one: &Labels,
    op: BinaryOp,
    matching: Option<&VectorMatching>,
) -> Labels {
    let Some(vm) = matching else {
        return many.clone();
    };
    let _ = op;
    match &vm.group {
        None => signature(many, Some(vm)),
        Some(g) => {
            let mut out: Labels = many
                .iter()
                .filter(|(n, _)| !g.include.contains(n))
                .cloned()
                .collect();
            for name in &g.include {
                if let Some((_, v)) = one.iter().find(|(n, _)| n == name) {
                    out.push((name.clone(), v.clone()));
                }
            }
            out.sort_by(|a, b| a.0.cmp(&b.0));
            out
        }
    }
}

fn vector_op(
    op: BinaryOp,
    return_bool: bool,
    matching: Option<&VectorMatching>,
    l: Matrix,
    r: Matrix,
    grid: &Grid,
) -> Result<Matrix, EngineError> {
    let swap = matching
        .and_then(|m| m.group.as_ref())
        .is_some_and(|g| !g.left);
    let grouped = matching.and_then(|m| m.group.as_ref()).is_some();
    // `many` is iterated; `one` is indexed by signature.
    let (many, one) = if swap { (r, l) } else { (l, r) };
    let msig: Vec<Labels> = many
        .iter()
        .map(|s| signature(&s.labels, matching))
        .collect();
    let osig: Vec<Labels> = one.iter().map(|s| signature(&s.labels, matching)).collect();
    // Signatures become small ids once, so the per-step matching below
    // indexes arrays instead of hashing label sets for every sample.
    let mut ids: HashMap<&Labels, u32> = HashMap::new();
    let mut mid: Vec<u32> = Vec::with_capacity(msig.len());
    for sig in &msig {
        let next = ids.len() as u32;
        mid.push(*ids.entry(sig).or_insert(next));
    }
    let mut oid: Vec<u32> = Vec::with_capacity(osig.len());
    for sig in &osig {
        let next = ids.len() as u32;
        oid.push(*ids.entry(sig).or_insert(next));
    }
    let nsig = ids.len();
    let msteps = by_step(&many, grid.len);
    let osteps = by_step(&one, grid.len);
    let mut pair_out: HashMap<(u32, u32), usize> = HashMap::new();
    // The last `(one index, output index)` of each many-side series: pairs rarely change.
    let mut last_pair: Vec<(u32, usize)> = vec![(u32::MAX, 0); many.len()];
    let mut out: Vec<Series> = Vec::new();
    let mut out_index: HashMap<Labels, usize> = HashMap::new();
    // Per signature id: the step (+1) it was last filled at, and its one-side sample.
    let mut right: Vec<(u32, u32, f64)> = vec![(0, 0, 0.0); nsig];
    let mut inserted: Vec<u32> = vec![0; nsig];
    for step in 0..grid.len as usize {
        let stamp = step as u32 + 1;
        for &(i, v) in &osteps[step] {
            let slot = &mut right[oid[i as usize] as usize];
            if slot.0 == stamp {
                return Err(EngineError::DuplicateMatch(
                    label_text(&osig[i as usize]),
                    if swap {
                        "left hand-side"
                    } else {
                        "right hand-side"
                    },
                ));
            }
            *slot = (stamp, i, v);
        }
        for &(mi, mv) in &msteps[step] {
            let sid = mid[mi as usize] as usize;
            let (filled, oi, ov) = right[sid];
            if filled != stamp {
                continue;
            }
            let (vl, vr) = if swap { (ov, mv) } else { (mv, ov) };
            let Some(v) = elem(op, vl, vr, vl, return_bool) else {
                continue;
            };
            if !grouped {
                if inserted[sid] == stamp {
                    return Err(EngineError::DuplicateMatch(
                        label_text(&msig[mi as usize]),
                        if swap {
                            "right hand-side"
                        } else {
                            "left hand-side"
                        },
                    ));
                }
                inserted[sid] = stamp;
            }
            let cached = last_pair[mi as usize];
            let idx = if cached.0 == oi {
                cached.1
            } else {
                let idx = *pair_out.entry((mi, oi)).or_insert_with(|| {
                    let labels = result_labels(
                        &many[mi as usize].labels,
                        &one[oi as usize].labels,
                        op,
                        matching,
                    );
                    *out_index.entry(labels.clone()).or_insert_with(|| {
                        out.push(Series {
                            labels,
                            points: Vec::new(),
                        });
                        out.len() - 1
                    })
                });
                last_pair[mi as usize] = (oi, idx);
                idx
            };
            let pts = &mut out[idx].points;
            if pts.last().is_none_or(|p| p.step != step as u32) {
                pts.push(Point {
                    step: step as u32,
                    v,
                });
            }
        }
    }
    out.retain(|s| !s.points.is_empty());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use logql_parser::GroupModifier;

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

    const G: Grid = Grid {
        start: 0,
        step: 1,
        len: 2,
    };

    fn vals(v: Value) -> Vec<(Labels, Vec<(u32, f64)>)> {
        let Value::Vector(m) = v else {
            panic!("scalar")
        };
        let mut out: Vec<_> = m
            .into_iter()
            .map(|s| (s.labels, s.points.iter().map(|p| (p.step, p.v)).collect()))
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

    fn md(return_bool: bool, matching: Option<VectorMatching>) -> BinaryModifier {
        BinaryModifier {
            return_bool,
            matching,
        }
    }

    fn on(labels: &[&str], group: Option<GroupModifier>) -> Option<VectorMatching> {
        Some(VectorMatching {
            on: true,
            labels: labels.iter().map(|s| (*s).into()).collect(),
            group,
        })
    }

    #[test]
    fn scalars() {
        let r = apply(
            BinaryOp::Pow,
            &md(false, None),
            Value::Scalar(2.0),
            Value::Scalar(10.0),
            &G,
        )
        .unwrap();
        assert_eq!(r, Value::Scalar(1024.0));
        let r = apply(
            BinaryOp::Gt,
            &md(false, None),
            Value::Scalar(1.0),
            Value::Scalar(2.0),
            &G,
        )
        .unwrap();
        assert_eq!(r, Value::Scalar(0.0));
        let r = apply(
            BinaryOp::Mod,
            &md(false, None),
            Value::Scalar(-7.0),
            Value::Scalar(3.0),
            &G,
        )
        .unwrap();
        assert_eq!(r, Value::Scalar(-1.0));
    }

    #[test]
    fn vector_scalar_filter_and_bool() {
        let m = vec![s(&[("a", "1")], &[(0, 1.0), (1, 5.0)])];
        let r = apply(
            BinaryOp::Gt,
            &md(false, None),
            Value::Vector(m.clone()),
            Value::Scalar(2.0),
            &G,
        )
        .unwrap();
        assert_eq!(vals(r), vec![(l(&[("a", "1")]), vec![(1, 5.0)])]);
        let r = apply(
            BinaryOp::Gt,
            &md(true, None),
            Value::Vector(m.clone()),
            Value::Scalar(2.0),
            &G,
        )
        .unwrap();
        assert_eq!(vals(r), vec![(l(&[("a", "1")]), vec![(0, 0.0), (1, 1.0)])]);
        let r = apply(
            BinaryOp::Lt,
            &md(false, None),
            Value::Scalar(2.0),
            Value::Vector(m.clone()),
            &G,
        )
        .unwrap();
        assert_eq!(vals(r), vec![(l(&[("a", "1")]), vec![(1, 5.0)])]);
        let r = apply(
            BinaryOp::Div,
            &md(false, None),
            Value::Scalar(10.0),
            Value::Vector(m),
            &G,
        )
        .unwrap();
        assert_eq!(vals(r), vec![(l(&[("a", "1")]), vec![(0, 10.0), (1, 2.0)])]);
    }

    #[test]
    fn one_to_one_matching() {
        let lhs = vec![
            s(&[("app", "a"), ("x", "1")], &[(0, 6.0), (1, 8.0)]),
            s(&[("app", "b"), ("x", "1")], &[(0, 1.0)]),
        ];
        let rhs = vec![s(&[("app", "a"), ("y", "2")], &[(0, 2.0)])];
        let r = apply(
            BinaryOp::Div,
            &md(false, on(&["app"], None)),
            Value::Vector(lhs.clone()),
            Value::Vector(rhs.clone()),
            &G,
        )
        .unwrap();
        assert_eq!(vals(r), vec![(l(&[("app", "a")]), vec![(0, 3.0)])]);
        // Without matching, label sets differ: nothing matches.
        let r = apply(
            BinaryOp::Div,
            &md(false, None),
            Value::Vector(lhs.clone()),
            Value::Vector(rhs.clone()),
            &G,
        )
        .unwrap();
        assert!(vals(r).is_empty());
        let ign = Some(VectorMatching {
            on: false,
            labels: vec!["x".into(), "y".into()],
            group: None,
        });
        let r = apply(
            BinaryOp::Sub,
            &md(false, ign),
            Value::Vector(lhs),
            Value::Vector(rhs),
            &G,
        )
        .unwrap();
        assert_eq!(vals(r), vec![(l(&[("app", "a")]), vec![(0, 4.0)])]);
    }

    #[test]
    fn group_left_copies_include_labels() {
        let many = vec![
            s(&[("app", "a"), ("pod", "1")], &[(0, 4.0)]),
            s(&[("app", "a"), ("pod", "2")], &[(0, 6.0)]),
        ];
        let one = vec![s(&[("app", "a"), ("team", "t")], &[(0, 2.0)])];
        let g = Some(GroupModifier {
            left: true,
            include: vec!["team".into()],
        });
        let r = apply(
            BinaryOp::Div,
            &md(false, on(&["app"], g)),
            Value::Vector(many.clone()),
            Value::Vector(one.clone()),
            &G,
        )
        .unwrap();
        assert_eq!(
            vals(r),
            vec![
                (
                    l(&[("app", "a"), ("pod", "1"), ("team", "t")]),
                    vec![(0, 2.0)]
                ),
                (
                    l(&[("app", "a"), ("pod", "2"), ("team", "t")]),
                    vec![(0, 3.0)]
                ),
            ]
        );
        let gr = Some(GroupModifier {
            left: false,
            include: vec![],
        });
        let r = apply(
            BinaryOp::Sub,
            &md(false, on(&["app"], gr)),
            Value::Vector(one.clone()),
            Value::Vector(many.clone()),
            &G,
        )
        .unwrap();
        assert_eq!(
            vals(r),
            vec![
                (l(&[("app", "a"), ("pod", "1")]), vec![(0, -2.0)]),
                (l(&[("app", "a"), ("pod", "2")]), vec![(0, -4.0)]),
            ]
        );
        // Many-to-one without group_left is an error.
        let err = apply(
            BinaryOp::Div,
            &md(false, on(&["app"], None)),
            Value::Vector(many),
            Value::Vector(one),
            &G,
        )
        .unwrap_err();
        assert!(matches!(err, EngineError::DuplicateMatch(..)));
    }

    #[test]
    fn set_operators() {
        let a = vec![
            s(&[("app", "a")], &[(0, 1.0), (1, 1.0)]),
            s(&[("app", "b")], &[(0, 2.0)]),
        ];
        let b = vec![
            s(&[("app", "a")], &[(1, 9.0)]),
            s(&[("app", "c")], &[(0, 3.0)]),
        ];
        let and = apply(
            BinaryOp::And,
            &md(false, None),
            Value::Vector(a.clone()),
            Value::Vector(b.clone()),
            &G,
        )
        .unwrap();
        assert_eq!(vals(and), vec![(l(&[("app", "a")]), vec![(1, 1.0)])]);
        let unless = apply(
            BinaryOp::Unless,
            &md(false, None),
            Value::Vector(a.clone()),
            Value::Vector(b.clone()),
            &G,
        )
        .unwrap();
        assert_eq!(
            vals(unless),
            vec![
                (l(&[("app", "a")]), vec![(0, 1.0)]),
                (l(&[("app", "b")]), vec![(0, 2.0)])
            ]
        );
        let or = apply(
            BinaryOp::Or,
            &md(false, None),
            Value::Vector(a),
            Value::Vector(b),
            &G,
        )
        .unwrap();
        assert_eq!(
            vals(or),
            vec![
                (l(&[("app", "a")]), vec![(0, 1.0), (1, 1.0)]),
                (l(&[("app", "b")]), vec![(0, 2.0)]),
                (l(&[("app", "c")]), vec![(0, 3.0)]),
            ]
        );
        let empty: Matrix = vec![];
        let or0 = apply(
            BinaryOp::Or,
            &md(false, None),
            Value::Vector(empty),
            Value::Vector(vec![s(&[], &[(0, 0.0), (1, 0.0)])]),
            &G,
        )
        .unwrap();
        assert_eq!(vals(or0), vec![(l(&[]), vec![(0, 0.0), (1, 0.0)])]);
    }

    #[test]
    fn division_by_zero_is_nan_as_in_loki() {
        let (v, keep) = scalar_op(BinaryOp::Div, 4.0, 0.0).unwrap();
        assert!(v.is_nan() && keep);
        assert!(scalar_op(BinaryOp::Mod, 4.0, 0.0).unwrap().0.is_nan());
        assert_eq!(scalar_op(BinaryOp::Div, 4.0, 2.0), Some((2.0, true)));
    }
}

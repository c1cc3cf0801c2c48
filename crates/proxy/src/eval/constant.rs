//! Evaluation of constant metric expressions (literals, `vector()`, binary operators).

use logql_parser::{BinaryExpr, BinaryOp, MetricExpr};

/// The result of a constant expression; it is the same at every evaluation time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A scalar (`1+1`).
    Scalar(f64),
    /// A vector with no labels: one sample, or none when a comparison filtered it out.
    Vector(Option<f64>),
}

/// Evaluates `expr` if it contains no log selector.
///
/// Returns `None` when the expression needs log data (range aggregations and
/// anything built on them), so the caller can route it elsewhere.
pub fn evaluate(expr: &MetricExpr) -> Option<Value> {
    match expr {
        MetricExpr::Literal(v) => Some(Value::Scalar(*v)),
        MetricExpr::Vector(v) => Some(Value::Vector(Some(*v))),
        MetricExpr::Binary(b) => binary(b),
        MetricExpr::RangeAggregation(_)
        | MetricExpr::VectorAggregation(_)
        | MetricExpr::LabelReplace(_) => None,
    }
}

fn binary(b: &BinaryExpr) -> Option<Value> {
    let lhs = evaluate(&b.lhs)?;
    let rhs = evaluate(&b.rhs)?;
    let bool_mod = b.modifier.return_bool;
    Some(match (lhs, rhs) {
        (Value::Scalar(l), Value::Scalar(r)) => {
            // Between literals a comparison yields 0/1 (nothing to filter).
            Value::Scalar(arith(b.op, l, r).or_else(|| compare(b.op, l, r).map(f64::from))?)
        }
        (Value::Vector(l), Value::Vector(r)) => match b.op {
            // Both sides carry the same (empty) label set, so they always match.
            BinaryOp::And => Value::Vector(if r.is_some() { l } else { None }),
            BinaryOp::Or => Value::Vector(l.or(r)),
            BinaryOp::Unless => Value::Vector(if r.is_some() { None } else { l }),
            op => Value::Vector(match (l, r) {
                (Some(l), Some(r)) => vector_op(op, l, r, l, bool_mod)?,
                _ => None,
            }),
        },
        (Value::Vector(v), Value::Scalar(s)) => Value::Vector(match v {
            Some(v) => vector_op(b.op, v, s, v, bool_mod)?,
            None => None,
        }),
        (Value::Scalar(s), Value::Vector(v)) => Value::Vector(match v {
            // A filtering comparison keeps the vector's own sample value.
            Some(v) => vector_op(b.op, s, v, v, bool_mod)?,
            None => None,
        }),
    })
}

/// Applies an arithmetic or comparison operator where a vector is involved.
/// The outer `Option` is `None` for operators invalid here (set operators with a scalar).
fn vector_op(op: BinaryOp, l: f64, r: f64, kept: f64, return_bool: bool) -> Option<Option<f64>> {
    if let Some(v) = arith(op, l, r) {
        return Some(Some(v));
    }
    let holds = compare(op, l, r)?;
    Some(if return_bool {
        Some(f64::from(holds))
    } else if holds {
        Some(kept)
    } else {
        None
    })
}

fn arith(op: BinaryOp, l: f64, r: f64) -> Option<f64> {
    Some(match op {
        BinaryOp::Add => l + r,
        BinaryOp::Sub => l - r,
        BinaryOp::Mul => l * r,
        BinaryOp::Div => l / r,
        // Go's math.Mod: the result has the sign of the dividend, like Rust's `%`.
        BinaryOp::Mod => l % r,
        BinaryOp::Pow => l.powf(r),
        _ => return None,
    })
}

fn compare(op: BinaryOp, l: f64, r: f64) -> Option<bool> {
    Some(match op {
        BinaryOp::Eq => l == r,
        BinaryOp::Neq => l != r,
        BinaryOp::Gt => l > r,
        BinaryOp::Ge => l >= r,
        BinaryOp::Lt => l < r,
        BinaryOp::Le => l <= r,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use logql_parser::BinaryModifier;

    fn bin(op: BinaryOp, lhs: MetricExpr, rhs: MetricExpr, return_bool: bool) -> MetricExpr {
        MetricExpr::Binary(BinaryExpr {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
            modifier: BinaryModifier {
                return_bool,
                matching: None,
            },
        })
    }
    use MetricExpr::{Literal as L, Vector as V};

    #[test]
    fn literals() {
        assert_eq!(
            evaluate(&bin(BinaryOp::Add, L(1.0), L(1.0), false)),
            Some(Value::Scalar(2.0))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Pow, L(2.0), L(10.0), false)),
            Some(Value::Scalar(1024.0))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Mod, L(-7.0), L(3.0), false)),
            Some(Value::Scalar(-1.0))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Gt, L(1.0), L(2.0), false)),
            Some(Value::Scalar(0.0))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Le, L(1.0), L(2.0), false)),
            Some(Value::Scalar(1.0))
        );
    }

    #[test]
    fn vectors() {
        assert_eq!(
            evaluate(&bin(BinaryOp::Add, V(1.0), V(1.0), false)),
            Some(Value::Vector(Some(2.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Mul, V(3.0), L(2.0), false)),
            Some(Value::Vector(Some(6.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Sub, L(3.0), V(2.0), false)),
            Some(Value::Vector(Some(1.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Div, V(1.0), V(0.0), false)),
            Some(Value::Vector(Some(f64::INFINITY)))
        );
    }

    #[test]
    fn comparisons_filter_or_return_bool() {
        assert_eq!(
            evaluate(&bin(BinaryOp::Gt, V(1.0), V(2.0), false)),
            Some(Value::Vector(None))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Lt, V(1.0), V(2.0), false)),
            Some(Value::Vector(Some(1.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Gt, V(1.0), V(2.0), true)),
            Some(Value::Vector(Some(0.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Lt, L(1.0), V(5.0), false)),
            Some(Value::Vector(Some(5.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Eq, V(5.0), L(5.0), false)),
            Some(Value::Vector(Some(5.0)))
        );
        // An empty side propagates.
        let empty = bin(BinaryOp::Gt, V(1.0), V(2.0), false);
        assert_eq!(
            evaluate(&bin(BinaryOp::Add, empty, V(1.0), false)),
            Some(Value::Vector(None))
        );
    }

    #[test]
    fn set_operators() {
        let empty = || bin(BinaryOp::Gt, V(1.0), V(2.0), false);
        assert_eq!(
            evaluate(&bin(BinaryOp::Or, V(1.0), V(2.0), false)),
            Some(Value::Vector(Some(1.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Or, empty(), V(2.0), false)),
            Some(Value::Vector(Some(2.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::And, V(1.0), V(2.0), false)),
            Some(Value::Vector(Some(1.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::And, V(1.0), empty(), false)),
            Some(Value::Vector(None))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Unless, V(1.0), empty(), false)),
            Some(Value::Vector(Some(1.0)))
        );
        assert_eq!(
            evaluate(&bin(BinaryOp::Unless, V(1.0), V(2.0), false)),
            Some(Value::Vector(None))
        );
    }
}

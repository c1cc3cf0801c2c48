//! The `stats` pipe of a bucketed range aggregation.

use std::fmt::Write as _;

use super::unwrap::{NUMBER_FIELD, SQUARE_FIELD, VALUE_FIELD};
use crate::quote::{quote, write_field};

/// A per-bucket statistic; [`StatsFunc::name`] is its result field, prefixed so
/// it never collides with a grouping field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatsFunc {
    /// `count()`: entries (or valid samples).
    Count,
    /// `sum_len(_msg)`: bytes of the lines.
    Bytes,
    /// `sum(__lokivl_n)`.
    Sum,
    /// `min(__lokivl_n)`.
    Min,
    /// `max(__lokivl_n)`.
    Max,
    /// `sum(__lokivl_sq)`: sum of squares, for stddev/stdvar.
    SumSquares,
    /// `count() if (!__lokivl_v:~guard)`: values Loki fails to convert.
    Errors,
    /// `count() if (__lokivl_g:=1)`: rows on which a parser run in
    /// VictoriaLogs may differ from Loki's ([`super::parsed`]).
    Suspect,
}

impl StatsFunc {
    /// The result field name in VictoriaLogs' answer.
    pub fn name(self) -> &'static str {
        match self {
            StatsFunc::Count => "__lokivl_c",
            StatsFunc::Bytes => "__lokivl_b",
            StatsFunc::Sum => "__lokivl_s",
            StatsFunc::Min => "__lokivl_min",
            StatsFunc::Max => "__lokivl_max",
            StatsFunc::SumSquares => "__lokivl_ssq",
            StatsFunc::Errors => "__lokivl_e",
            StatsFunc::Suspect => "__lokivl_x",
        }
    }
}

/// Where buckets must start (mod `bucket_ns`) for Loki windows ending at `end_ns`.
///
/// VictoriaLogs buckets are `[b, b + g)`; Loki's windows are `(t − range, t]`.
/// Buckets starting at `b ≡ t + 1 (mod g)` are exactly `(a − g, a]` for some
/// `a ≡ t (mod g)`, labelled `a − g + 1`. The `offset` that puts them there
/// depends on the VictoriaLogs release (`proxy::backend::dialect`).
pub fn bucket_start(end_ns: i64, bucket_ns: i64) -> i64 {
    (end_ns + 1).rem_euclid(bucket_ns)
}

pub(crate) fn stats_pipe(
    bucket_ns: i64,
    offset_ns: i64,
    by: &[String],
    funcs: &[StatsFunc],
    guard: &str,
) -> String {
    let mut s = String::with_capacity(128);
    // Writing into a String cannot fail.
    let _ = write!(s, "stats by (_time:{bucket_ns}ns offset {offset_ns}ns");
    for f in by {
        s.push_str(", ");
        let _ = write_field(&mut s, f);
    }
    s.push(')');
    for (i, f) in funcs.iter().enumerate() {
        s.push_str(if i == 0 { " " } else { ", " });
        match f {
            StatsFunc::Count => s.push_str("count()"),
            StatsFunc::Bytes => s.push_str("sum_len(_msg)"),
            StatsFunc::Sum => agg(&mut s, "sum", NUMBER_FIELD),
            StatsFunc::Min => agg(&mut s, "min", NUMBER_FIELD),
            StatsFunc::Max => agg(&mut s, "max", NUMBER_FIELD),
            StatsFunc::SumSquares => agg(&mut s, "sum", SQUARE_FIELD),
            StatsFunc::Errors => {
                s.push_str("count() if (!");
                let _ = write_field(&mut s, VALUE_FIELD);
                s.push_str(":~");
                s.push_str(&quote(guard));
                s.push(')');
            }
            StatsFunc::Suspect => {
                let _ = write!(s, "count() if ({})", super::parsed::suspect_marker());
            }
        }
        s.push(' ');
        s.push_str(&quote(f.name()));
    }
    s
}

fn agg(s: &mut String, func: &str, field: &str) {
    s.push_str(func);
    s.push('(');
    let _ = write_field(s, field);
    s.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_start_just_after_steps() {
        // Steps at 100 s, 160 s …, buckets of 60 s: buckets (40, 100], (100, 160].
        let g = 60_000_000_000;
        let o = bucket_start(100_000_000_000, g);
        assert_eq!(o, 40_000_000_001);
        assert_eq!(bucket_start(-1, g), 0);
    }
}

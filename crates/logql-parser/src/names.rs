//! Keyword spellings of operators, shared by the builder and the printer.

use crate::ast::{BinaryOp, RangeOp, VectorOp};

macro_rules! names {
    ($ty:ty { $($v:ident => $s:expr),* $(,)? }) => {
        impl $ty {
            /// The operator as LogQL writes it (lower case).
            pub fn name(self) -> &'static str {
                match self { $(<$ty>::$v => $s),* }
            }
            /// The operator for a lower-case LogQL spelling.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($s => Some(<$ty>::$v),)* _ => None }
            }
        }
    };
}

names!(RangeOp {
    CountOverTime => "count_over_time", Rate => "rate", RateCounter => "rate_counter",
    BytesOverTime => "bytes_over_time", BytesRate => "bytes_rate", AvgOverTime => "avg_over_time",
    SumOverTime => "sum_over_time", MinOverTime => "min_over_time", MaxOverTime => "max_over_time",
    StddevOverTime => "stddev_over_time", StdvarOverTime => "stdvar_over_time",
    QuantileOverTime => "quantile_over_time", FirstOverTime => "first_over_time",
    LastOverTime => "last_over_time", AbsentOverTime => "absent_over_time",
});

names!(VectorOp {
    Sum => "sum", Avg => "avg", Min => "min", Max => "max", Count => "count", Stddev => "stddev",
    Stdvar => "stdvar", Topk => "topk", Bottomk => "bottomk", Sort => "sort",
    SortDesc => "sort_desc", ApproxTopk => "approx_topk",
});

names!(BinaryOp {
    Or => "or", And => "and", Unless => "unless", Add => "+", Sub => "-", Mul => "*", Div => "/",
    Mod => "%", Pow => "^", Eq => "==", Neq => "!=", Gt => ">", Ge => ">=", Lt => "<", Le => "<=",
});

impl BinaryOp {
    /// The operator symbol, as in Loki's messages (`+`, `or`).
    pub fn symbol(self) -> &'static str {
        self.name()
    }
    /// The operator for a symbol.
    pub fn from_symbol(s: &str) -> Option<Self> {
        Self::from_name(s)
    }
}

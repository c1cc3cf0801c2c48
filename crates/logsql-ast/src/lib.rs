//! Typed LogsQL and the lowering of a LogQL AST into a plan for VictoriaLogs.
//!
//! [`Filter`] and [`Pipe`] model the LogsQL the proxy sends; their `Display`
//! prints valid LogsQL with every string and field name quoted. [`lower_log`]
//! turns a LogQL log query into a [`LogPlan`] with Loki's semantics, or refuses
//! with [`LowerError::Unsupported`] rather than approximating.
//!
//! ```
//! use logql_parser::{LineFilter, LineFilterOp, LineFilterValue, LogExpr, MatchOp, Matcher, Selector, Stage};
//!
//! let expr = LogExpr {
//!     selector: Selector {
//!         matchers: vec![Matcher { name: "app".into(), op: MatchOp::Eq, value: "api".into() }],
//!     },
//!     pipeline: vec![Stage::LineFilter(LineFilter {
//!         op: LineFilterOp::Contains,
//!         values: vec![LineFilterValue::Literal("[ERROR]".into())],
//!     })],
//! };
//! let plan = logsql_ast::lower_log(&expr, &logsql_ast::Discovery::default()).unwrap();
//! assert_eq!(plan.query.to_string(), r#"{app="api"} and _msg:~"\\[ERROR\\]""#);
//! ```

mod error;
mod filter;
mod log_prefilter;
mod lower;
mod metric;
pub mod otel;
mod pipe;
mod plan;
mod query;
mod quote;

pub use error::LowerError;
pub use filter::{Filter, RangeOp, StreamMatcher, StreamOp};
pub use lower::{Discovery, loki_order, lower_log, lower_selector};
/// Names of the labels Loki adds at ingest.
pub mod discovered {
    pub use crate::lower::discovery::{DETECTED_LEVEL, SERVICE_NAME, UNKNOWN_SERVICE};
}
pub use log_prefilter::add_parser_prefilter;
pub use lower::logfmt_guard::logfmt_suspect;
pub use metric::line_level;
pub use metric::parsed::SUSPECT_FIELD;
pub use metric::{
    MetricPipe, NUMBER_FIELD, RangePlan, StatsFunc, VALUE_FIELD, ValueScale, bucket_start,
    guard_regex,
};
pub use pipe::{Pipe, Unpack, UnpackFormat};
pub use plan::{LogPlan, PARSED_PREFIX};
pub use query::Query;
pub use quote::quote;

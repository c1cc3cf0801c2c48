//! What VictoriaLogs computes for a log query.

use crate::query::Query;

/// The prefix given to every field a LogQL parser (`json`, `logfmt`) produces.
///
/// It keeps parser output apart from stored fields (stream labels and
/// structured metadata), so label filters can apply Loki's precedence and the
/// proxy can report the `parsed` category.
pub const PARSED_PREFIX: &str = "__lokivl_parsed.";

/// Scratch prefix for field expressions (`json a="b.c"`), deleted before the plan ends.
pub(crate) const SCRATCH_PREFIX: &str = "__lokivl_tmp.";

/// What VictoriaLogs computes for a log query, and what the proxy must know to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct LogPlan {
    /// The LogsQL sent to `/select/logsql/query`.
    pub query: Query,
    /// Fields whose names start with this prefix are parser output (Loki's `parsed` labels).
    ///
    /// `Some(PARSED_PREFIX)` when the pipeline has a parser. The rest of the name
    /// is VictoriaLogs' flattened key (`a.b` for nested JSON); Loki's label name is
    /// that with every character outside `[A-Za-z0-9_]` replaced by `_`, and with
    /// `_extracted` appended when a stream label has the same name.
    pub parsed_prefix: Option<&'static str>,
}

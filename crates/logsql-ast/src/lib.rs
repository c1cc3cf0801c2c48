//! Typed LogsQL and the lowering of a LogQL AST into a plan.
//!
//! STUB: the lowering helper replaces this file; the signatures below are the
//! contract the proxy codes against.

use std::fmt;

/// A LogsQL query: a filter followed by pipes. `Display` prints valid LogsQL.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Placeholder text until the typed filter lands.
    pub text: String,
    /// Pipes appended after the filter, in order.
    pub pipes: Vec<Pipe>,
}

/// A LogsQL pipe the proxy may append (sort, limit).
#[derive(Debug, Clone, PartialEq)]
pub enum Pipe {
    /// `| sort by (_time desc) limit N`
    Sort {
        /// Fields with `true` for descending.
        by: Vec<(String, bool)>,
        /// Optional top-N limit.
        limit: Option<u64>,
    },
    /// `| limit N`
    Limit(u64),
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What VictoriaLogs computes for a log query, and what the proxy must know to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct LogPlan {
    /// The LogsQL sent to `/select/logsql/query`.
    pub query: Query,
    /// Fields whose names start with this prefix are parser output (Loki's `parsed` labels).
    pub parsed_prefix: Option<&'static str>,
}

/// Why a LogQL expression cannot be lowered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LowerError {
    /// The construct is valid LogQL but not supported yet.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Lowers a LogQL log query into a plan.
///
/// # Errors
/// [`LowerError::Unsupported`] for stages not lowered yet.
pub fn lower_log(_expr: &logql_parser::LogExpr) -> Result<LogPlan, LowerError> {
    Err(LowerError::Unsupported("stub".into()))
}

/// Lowers a stream selector alone (for `/labels?query=`, `/series?match[]=`).
pub fn lower_selector(_selector: &logql_parser::Selector) -> Query {
    Query { text: "*".into(), pipes: Vec::new() }
}

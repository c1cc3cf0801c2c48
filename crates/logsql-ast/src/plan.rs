//! What VictoriaLogs computes for a log query, and what the proxy evaluates after it.

use logql_parser::Stage;

use crate::query::Query;

/// The prefix given to every field a LogQL parser (`json`, `logfmt`) produces
/// when the parser runs in VictoriaLogs.
///
/// It keeps parser output apart from stored fields (stream labels and
/// structured metadata), so label filters can apply Loki's precedence and the
/// proxy can report the `parsed` category. Plans built by [`crate::lower_log`]
/// run every parser in the proxy today (see [`LogPlan::proxy_stages`]), so
/// their `parsed_prefix` is `None`.
pub const PARSED_PREFIX: &str = "__lokivl_parsed.";

/// A log query split between VictoriaLogs and the proxy.
///
/// VictoriaLogs runs [`LogPlan::query`], which selects exactly the entries
/// that survive the stages it stands for (the selector, every line filter
/// that reads the original line, string label filters over stored fields
/// before any proxy stage). The proxy then runs [`LogPlan::proxy_stages`] on
/// each returned entry, in order; that list starts at the first stage that
/// could not be lowered exactly and holds every stage after it except the
/// line filters already applied by VictoriaLogs.
#[derive(Debug, Clone, PartialEq)]
pub struct LogPlan {
    /// The LogsQL sent to `/select/logsql/query`.
    pub query: Query,
    /// Fields whose names start with this prefix are parser output (Loki's `parsed` labels).
    ///
    /// `Some(PARSED_PREFIX)` only when a parser was lowered to VictoriaLogs.
    /// The rest of the name is VictoriaLogs' flattened key; Loki's label name is
    /// that with every character outside `[A-Za-z0-9_]` replaced by `_`, and with
    /// `_extracted` appended when a stream label has the same name.
    pub parsed_prefix: Option<&'static str>,
    /// LogQL stages the proxy evaluates over the decoded rows, in order.
    ///
    /// Empty when VictoriaLogs computes the whole query; then every returned
    /// row is an answer entry as is.
    pub proxy_stages: Vec<Stage>,
    /// The labels the proxy adds to every answer entry (Loki's ingest-time
    /// `service_name` and `detected_level`), and that selectors and label
    /// filters in this plan were lowered against.
    pub discovery: crate::Discovery,
}

impl LogPlan {
    /// Whether the proxy must evaluate stages (and so may drop rows, change
    /// lines or labels) after VictoriaLogs.
    pub fn has_proxy_stages(&self) -> bool {
        !self.proxy_stages.is_empty()
    }
}

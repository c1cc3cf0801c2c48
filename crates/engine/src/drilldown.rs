//! Grafana Logs Drilldown's metadata, computed from log entries: detected
//! fields and their values ([`fields`]), log patterns ([`drain`]) and the
//! stream index ([`streams`]).
//!
//! The entries come categorized as Loki's `categorize-labels` answer splits
//! them ([`Stream`], [`Entry`]); fetching them is the service's business.

pub mod drain;
pub mod fields;
pub mod streams;

/// One entry with its labels split as Loki's `categorize-labels` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Nanoseconds since the epoch.
    pub ts: i64,
    /// The line after the pipeline.
    pub line: String,
    /// Structured metadata.
    pub metadata: Vec<(String, String)>,
    /// Labels set by the query's parsers.
    pub parsed: Vec<(String, String)>,
}

/// A stream of the answer: its stream labels and entries, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// Stream labels, sorted by name.
    pub labels: Vec<(String, String)>,
    /// Entries in the answer's order.
    pub entries: Vec<Entry>,
}

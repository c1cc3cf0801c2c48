//! Loki's parser hints for log queries (grafana/loki
//! `pkg/logql/log/parser_hints.go`): every label filter stage of the query
//! that reads one label (not an `and`/`or` combination) is also evaluated
//! the moment a parser sets that label, and a false result drops the line
//! right there. This matters when a later stage changes the label: in Loki,
//! `| logfmt | label_format level="{{ToUpper .level}}" | level="ERROR"`
//! drops every line, because `level="ERROR"` already fails on the parsed
//! lowercase value. The first filter naming a label is the one used.

use logql_parser::{LabelFilter, Stage};

use super::label_filter::LabelPred;
use super::labels::LabelsBuilder;

/// The hint filters of a pipeline.
#[derive(Debug, Default)]
pub struct Hints {
    filters: Vec<(String, LabelPred)>,
}

fn single_label(f: &LabelFilter) -> Option<&str> {
    match f {
        LabelFilter::And(..) | LabelFilter::Or(..) => None,
        LabelFilter::Paren(inner) => single_label(inner),
        LabelFilter::Matcher(m) => Some(&m.name),
        LabelFilter::Number { name, .. }
        | LabelFilter::Duration { name, .. }
        | LabelFilter::Bytes { name, .. }
        | LabelFilter::Ip { name, .. } => Some(name),
    }
}

impl Hints {
    /// Collects the hint filters of `stages`.
    ///
    /// # Errors
    /// A filter that does not compile.
    pub fn new(stages: &[Stage]) -> Result<Self, String> {
        let mut filters = Vec::new();
        for s in stages {
            if let Stage::LabelFilter(f) = s
                && let Some(name) = single_label(f)
            {
                filters.push((name.to_owned(), LabelPred::new(f)?));
            }
        }
        Ok(Self { filters })
    }

    /// Whether parsing may go on after a parser set `name`
    /// (Loki's `ShouldContinueParsingLine`).
    pub fn keep(&self, name: &str, lbs: &mut LabelsBuilder) -> bool {
        match self.filters.iter().find(|(n, _)| n == name) {
            Some((_, f)) => f.eval(lbs),
            None => true,
        }
    }
}

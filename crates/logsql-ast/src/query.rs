//! A whole LogsQL query: a filter followed by pipes.

use std::fmt;

use crate::filter::Filter;
use crate::pipe::Pipe;

/// A LogsQL query: a filter followed by pipes. `Display` prints valid LogsQL.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The filter selecting entries (stream filter, line filters, stored-field filters).
    pub filter: Filter,
    /// Pipes appended after the filter, in order; the proxy may push `sort`/`limit`.
    pub pipes: Vec<Pipe>,
}

impl Query {
    /// A query with the given filter and no pipes.
    pub fn new(filter: Filter) -> Self {
        Query {
            filter,
            pipes: Vec::new(),
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.filter)?;
        for p in &self.pipes {
            write!(f, " | {p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_follow_the_filter() {
        let mut q = Query::new(Filter::All);
        q.pipes.push(Pipe::Sort {
            by: vec![("_time".into(), true)],
            limit: Some(10),
        });
        q.pipes.push(Pipe::Limit(10));
        assert_eq!(
            q.to_string(),
            "* | sort by (_time desc) limit 10 | limit 10"
        );
    }
}

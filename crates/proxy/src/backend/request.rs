//! One call to VictoriaLogs as a typed value: the endpoint, the LogsQL and
//! its arguments. Only this module prints it into a form body, so fan-out
//! and logging read fields rather than re-parsing what another stage printed.

use logsql_ast::{Pipe, Query};

use super::Endpoint;
use super::dialect;

/// The LogsQL of a call.
///
/// Most calls carry the planner's typed [`Query`]; a few build their LogsQL
/// as text (the `stats` pipes of volume and bucketed queries, the offset
/// probe, Drilldown's selections), which is sent as written.
#[derive(Debug, Clone, PartialEq)]
pub enum LogsQl {
    /// A planned query, printed by its `Display`.
    Typed(Query),
    /// LogsQL written by the caller.
    Text(String),
}

impl From<Query> for LogsQl {
    fn from(q: Query) -> Self {
        Self::Typed(q)
    }
}

impl From<String> for LogsQl {
    fn from(q: String) -> Self {
        Self::Text(q)
    }
}

impl From<&str> for LogsQl {
    fn from(q: &str) -> Self {
        Self::Text(q.to_owned())
    }
}

impl std::fmt::Display for LogsQl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Typed(q) => q.fmt(f),
            Self::Text(q) => f.write_str(q),
        }
    }
}

/// Which entries of the range a log query keeps when there are more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// The newest `n`: VictoriaLogs' `limit` argument, which narrows the
    /// time range step by step (far cheaper than a full sort).
    Newest(usize),
    /// The oldest `n`: there is no cheap "oldest N", so the query gets a
    /// top-N `| sort by (_time) limit n`, which keeps only `n` entries in memory.
    Oldest(usize),
}

/// One VictoriaLogs call.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Where it goes.
    pub endpoint: Endpoint,
    /// The LogsQL (`query`).
    pub query: LogsQl,
    /// The first nanosecond wanted (`start`), if bounded.
    pub start: Option<i64>,
    /// The last nanosecond wanted, inclusive; sent in the spelling every
    /// VictoriaLogs release reads alike ([`dialect::exact_end`]).
    pub end: Option<i64>,
    /// How many entries, and which, a log query keeps.
    pub take: Option<Take>,
    /// The field whose values or names are asked (`field`).
    pub field: Option<String>,
}

impl Request {
    /// A call of `query` to `endpoint` over the inclusive `[start, end]`.
    pub fn new(endpoint: Endpoint, query: impl Into<LogsQl>, start: i64, end: i64) -> Self {
        Self {
            endpoint,
            query: query.into(),
            start: Some(start),
            end: Some(end),
            take: None,
            field: None,
        }
    }

    /// A `/select/logsql/query` call over the inclusive `[start, end]`.
    pub fn query(query: impl Into<LogsQl>, start: i64, end: i64) -> Self {
        Self::new(Endpoint::Query, query, start, end)
    }

    /// A `/select/logsql/query` call with no time range (the offset probe).
    pub fn unbounded(query: impl Into<LogsQl>) -> Self {
        Self {
            endpoint: Endpoint::Query,
            query: query.into(),
            start: None,
            end: None,
            take: None,
            field: None,
        }
    }

    /// This call keeping only `take` entries.
    #[must_use]
    pub fn take(mut self, take: Take) -> Self {
        self.take = Some(take);
        self
    }

    /// This call asking about `field`.
    #[must_use]
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// The LogsQL as sent: the query, plus the top-N sort of [`Take::Oldest`].
    pub fn logsql(&self) -> String {
        let Some(Take::Oldest(n)) = self.take else {
            return self.query.to_string();
        };
        let sort = Pipe::Sort {
            by: vec![("_time".to_owned(), false)],
            limit: Some(n as u64),
        };
        match &self.query {
            LogsQl::Typed(q) => {
                let mut q = q.clone();
                q.pipes.push(sort);
                q.to_string()
            }
            LogsQl::Text(q) => format!("{q} | {sort}"),
        }
    }

    /// The form body VictoriaLogs receives.
    pub fn form(&self) -> String {
        let mut body = form_urlencoded::Serializer::new(String::new());
        body.append_pair("query", &self.logsql());
        if let Some(start) = self.start {
            body.append_pair("start", &start.to_string());
        }
        if let Some(last) = self.end {
            let (end, filter) = dialect::exact_end(last);
            body.append_pair("end", &end);
            body.append_pair("extra_filters", &filter);
        }
        if let Some(Take::Newest(n)) = self.take {
            body.append_pair("limit", &n.to_string());
        }
        if let Some(field) = &self.field {
            body.append_pair("field", field);
        }
        body.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logsql_ast::Filter;

    fn pairs(form: &str) -> Vec<(String, String)> {
        form_urlencoded::parse(form.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    #[test]
    fn newest_is_the_limit_argument() {
        let r = Request::query(Query::new(Filter::All), 10, 20).take(Take::Newest(5));
        assert_eq!(
            pairs(&r.form()),
            [
                ("query".into(), "*".into()),
                ("start".into(), "10".into()),
                ("end".into(), "21".into()),
                (
                    "extra_filters".into(),
                    "_time:<1970-01-01T00:00:00.000000021Z".into()
                ),
                ("limit".into(), "5".into()),
            ]
        );
    }

    #[test]
    fn oldest_is_a_top_n_sort_typed_or_not() {
        let typed = Request::query(Query::new(Filter::All), 1, 2).take(Take::Oldest(7));
        assert_eq!(typed.logsql(), "* | sort by (_time) limit 7");
        let text = Request::query("{app=\"x\"}", 1, 2).take(Take::Oldest(7));
        assert_eq!(text.logsql(), "{app=\"x\"} | sort by (_time) limit 7");
        assert!(!text.form().contains("limit=7"));
    }

    #[test]
    fn unbounded_and_field() {
        assert_eq!(Request::unbounded("*").form(), "query=*");
        let r = Request::new(Endpoint::FieldValues, "*", 1, 2).field("app");
        assert_eq!(
            pairs(&r.form()).last().unwrap(),
            &("field".into(), "app".into())
        );
    }
}

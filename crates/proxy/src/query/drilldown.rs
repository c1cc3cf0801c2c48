//! Fetching the newest entries of a log query with Loki's label categories
//! (stream labels, structured metadata, parsed labels), the input of
//! detected fields, detected field values and patterns.
//!
//! The query runs through the same path as `query_range` with
//! `categorize-labels` (so pipelines, OTel names and metadata behave exactly
//! as there), and its typed answer is copied into [`Stream`]s.

use logql_parser::LogExpr;

use crate::backend::{Backend, Request, Take};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::query::log::LogRange;
use crate::work::{Work, cpu};
use engine::answer::{Category, LogAnswer};
use engine::direction::Direction;
pub use engine::drilldown::{Entry, Stream};
use engine::encode::streams::{StreamsOptions, decode_streams};
use engine::ndjson::Source as _;

/// Fetched entries plus the warnings of the run (a bound reached).
#[derive(Debug, Default)]
pub struct Fetched {
    /// Streams sorted by label string, entries newest first.
    pub streams: Vec<Stream>,
    /// Warnings to pass on (never dropped silently).
    pub warnings: Vec<String>,
}

impl Fetched {
    /// Number of entries over all streams.
    pub fn len(&self) -> usize {
        self.streams.iter().map(|s| s.entries.len()).sum()
    }

    /// Whether no entry was fetched.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The newest `limit` entries of `log` in `[start, end)`, categorized; a
/// pipeline run in lokivl reads from the request's row budget and stops at
/// its deadline.
///
/// # Errors
/// Invalid pipelines (400), backend failures, malformed answers (502).
pub async fn fetch(
    backend: &Backend,
    ctx: &RequestContext,
    log: &LogExpr,
    (start, end): (i64, i64),
    limit: usize,
    work: &Work,
) -> Result<Fetched, ApiError> {
    if end <= start || limit == 0 {
        return Ok(Fetched::default());
    }
    // Selectors and label filters see the labels Loki's ingest adds
    // (`{service_name="checkout"}` on streams that store only `app`).
    let plan = logsql_ast::lower_log(log, ctx.discovery())?;
    let answer = if plan.has_proxy_stages() {
        let q = LogRange {
            start,
            end,
            limit,
            direction: Direction::Backward,
            categorize: true,
        };
        crate::query::log::log_range_bounded(
            backend,
            ctx,
            &plan,
            q,
            &work.budgets.rows,
            work.deadline,
        )
        .await?
        .answer
    } else {
        let req = Request::query(plan.query.clone(), start, end - 1).take(Take::Newest(limit));
        let mut raw = backend.send_rows(ctx, &req).await?;
        let opts = StreamsOptions {
            direction: Direction::Backward,
            limit,
            categorize: true,
            parsed_prefix: plan.parsed_prefix,
        };
        let discovery = plan.discovery.clone();
        cpu::run(work.deadline, raw.byte_len(), move |_| {
            decode_streams(&mut raw, &opts, &discovery).map_err(|e| bad_gateway(e.to_string()))
        })
        .await?
    };
    Ok(Fetched::from_answer(&answer))
}

fn bad_gateway(message: String) -> ApiError {
    ApiError::BackendFailed {
        status: http::StatusCode::BAD_GATEWAY,
        message,
    }
}

impl Fetched {
    /// Copies a categorized answer's streams and warnings.
    pub fn from_answer(answer: &LogAnswer) -> Self {
        let owned = |it: &mut dyn Iterator<Item = (&str, &str)>| -> Vec<(String, String)> {
            it.map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
        };
        let streams = answer
            .streams()
            .map(|s| Stream {
                labels: owned(&mut s.labels()),
                entries: s
                    .entries()
                    .map(|e| Entry {
                        ts: e.ts,
                        line: e.line().to_owned(),
                        metadata: owned(&mut e.labels_of(Category::Metadata)),
                        parsed: owned(&mut e.labels_of(Category::Parsed)),
                    })
                    .collect(),
            })
            .collect();
        Self {
            streams,
            warnings: answer.warnings.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_categorized_answers() {
        let mut a = LogAnswer::new(true);
        a.warnings.push("w".into());
        a.begin_stream();
        a.push_stream_label("app", "a");
        a.push_entry(2, "l2");
        a.push_entry_label(Category::Metadata, "trace_id", "t");
        a.push_entry(1, "l1");
        a.push_entry_label(Category::Parsed, "x", "1");
        a.push_entry(0, "l0");
        let f = Fetched::from_answer(&a);
        assert_eq!(f.len(), 3);
        let s = &f.streams[0];
        assert_eq!(s.labels, vec![("app".to_owned(), "a".to_owned())]);
        assert_eq!(s.entries[0].ts, 2);
        assert_eq!(
            s.entries[0].metadata,
            vec![("trace_id".to_owned(), "t".to_owned())]
        );
        assert!(s.entries[0].parsed.is_empty());
        assert_eq!(s.entries[1].parsed, vec![("x".to_owned(), "1".to_owned())]);
        assert_eq!(s.entries[2].line, "l0");
        assert_eq!(f.warnings, ["w"]);
    }
}

//! Fetching the newest entries of a log query with Loki's label categories
//! (stream labels, structured metadata, parsed labels), the input of
//! detected fields, detected field values and patterns.
//!
//! The query runs through the same path as `query_range` with
//! `categorize-labels` (so pipelines, OTel names and metadata behave exactly
//! as there), and the answer is read back into [`Stream`]s.

use std::collections::BTreeMap;

use logql_parser::LogExpr;
use serde::Deserialize;

use crate::backend::Endpoint;
use crate::direction::Direction;
use crate::encode::streams::{StreamsOptions, encode_streams};
use crate::error::ApiError;
use crate::handler::AppState;

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

#[derive(Deserialize)]
struct Answer {
    data: Data,
    #[serde(default)]
    warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Data {
    result: Vec<RawStream>,
}

#[derive(Deserialize)]
struct RawStream {
    stream: BTreeMap<String, String>,
    values: Vec<(String, String, Categories)>,
}

#[derive(Deserialize, Default)]
struct Categories {
    #[serde(default, rename = "structuredMetadata")]
    metadata: BTreeMap<String, String>,
    #[serde(default)]
    parsed: BTreeMap<String, String>,
}

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

/// The newest `limit` entries of `log` in `[start, end)`, categorized.
///
/// # Errors
/// Invalid pipelines (400), backend failures, malformed answers (502).
pub async fn fetch(
    state: &AppState,
    log: &LogExpr,
    start: i64,
    end: i64,
    limit: usize,
) -> Result<Fetched, ApiError> {
    if end <= start || limit == 0 {
        return Ok(Fetched::default());
    }
    let plan = logsql_ast::lower_log(log).map_err(|e| ApiError::Unsupported(e.to_string()))?;
    let body = if plan.has_proxy_stages() {
        crate::pipeline::run::log_range(
            &state.backend,
            &plan,
            start,
            end,
            limit,
            Direction::Backward,
            true,
        )
        .await?
    } else {
        let q = plan.query.to_string();
        let (s, e, n) = (start.to_string(), (end - 1).to_string(), limit.to_string());
        let form = [
            ("query", q.as_str()),
            ("start", s.as_str()),
            ("end", e.as_str()),
            ("limit", n.as_str()),
        ];
        let mut raw = state.backend.post_form(Endpoint::Query, &form).await?;
        let opts = StreamsOptions {
            direction: Direction::Backward,
            limit,
            categorize: true,
            parsed_prefix: plan.parsed_prefix,
        };
        let mut out = Vec::with_capacity(raw.len() + 1024);
        encode_streams(&mut raw, &opts, &mut out).map_err(|e| bad_gateway(e.to_string()))?;
        out
    };
    parse_answer(&body)
}

fn bad_gateway(message: String) -> ApiError {
    ApiError::BackendFailed {
        status: http::StatusCode::BAD_GATEWAY,
        message,
    }
}

/// Reads a categorized `query_range` answer back.
///
/// # Errors
/// A body that is not such an answer (a defect): 500.
pub fn parse_answer(body: &[u8]) -> Result<Fetched, ApiError> {
    let a: Answer = serde_json::from_slice(body)
        .map_err(|e| ApiError::Internal(format!("reading back a streams answer: {e}")))?;
    let mut streams = Vec::with_capacity(a.data.result.len());
    for s in a.data.result {
        let mut entries = Vec::with_capacity(s.values.len());
        for (ts, line, c) in s.values {
            let ts = ts
                .parse()
                .map_err(|e| ApiError::Internal(format!("bad timestamp {ts:?}: {e}")))?;
            entries.push(Entry {
                ts,
                line,
                metadata: c.metadata.into_iter().collect(),
                parsed: c.parsed.into_iter().collect(),
            });
        }
        streams.push(Stream {
            labels: s.stream.into_iter().collect(),
            entries,
        });
    }
    Ok(Fetched {
        streams,
        warnings: a.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_categorized_answers() {
        let body = br#"{"status":"success","data":{"resultType":"streams","encodingFlags":["categorize-labels"],"result":[{"stream":{"app":"a"},"values":[["2","l2",{"structuredMetadata":{"trace_id":"t"}}],["1","l1",{"parsed":{"x":"1"}}],["0","l0",{}]]}],"stats":{}}}"#;
        let f = parse_answer(body).unwrap();
        assert_eq!(f.len(), 3);
        let s = &f.streams[0];
        assert_eq!(s.labels, vec![("app".to_owned(), "a".to_owned())]);
        assert_eq!(s.entries[0].ts, 2);
        assert_eq!(
            s.entries[0].metadata,
            vec![("trace_id".to_owned(), "t".to_owned())]
        );
        assert_eq!(s.entries[1].parsed, vec![("x".to_owned(), "1".to_owned())]);
        assert!(parse_answer(b"{}").is_err());
    }
}

//! Fetching the newest entries of a log query with Loki's label categories
//! (stream labels, structured metadata, parsed labels), the input of
//! detected fields, detected field values and patterns.
//!
//! The query runs through the same path as `query_range` with
//! `categorize-labels` (so pipelines, OTel names and metadata behave exactly
//! as there), and the answer is read back into [`Stream`]s.

use std::borrow::Cow;

use logql_parser::LogExpr;
use serde::Deserialize;

use crate::backend::{Request, Take};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::handler::AppState;
use crate::query::log::LogRange;
use crate::work::{Work, cpu};
use engine::direction::Direction;
pub use engine::drilldown::{Entry, Stream};
use engine::encode::streams::{StreamsOptions, encode_streams_discovered};

#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    data: Data<'a>,
    #[serde(default)]
    warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(borrow)]
    result: Vec<RawStream<'a>>,
}

#[derive(Deserialize)]
struct RawStream<'a> {
    #[serde(borrow)]
    stream: Pairs<'a>,
    #[serde(borrow)]
    values: Vec<(Cow<'a, str>, String, Categories<'a>)>,
}

#[derive(Deserialize, Default)]
struct Categories<'a> {
    #[serde(default, borrow, rename = "structuredMetadata")]
    metadata: Pairs<'a>,
    #[serde(default, borrow)]
    parsed: Pairs<'a>,
}

/// A JSON object of strings read as pairs sorted by name (the last of a
/// repeated name wins, as in a map), without building a map.
#[derive(Default)]
struct Pairs<'a>(Vec<(Cow<'a, str>, Cow<'a, str>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Pairs<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Pairs<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of strings")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut m: M,
            ) -> Result<Self::Value, M::Error> {
                let mut v: Vec<(Cow<'a, str>, Cow<'a, str>)> = Vec::new();
                while let Some((k, val)) = m.next_entry::<Borrowed<'a>, Borrowed<'a>>()? {
                    v.push((k.0, val.0));
                }
                // Stable: of equal names the last stays last; keep only it.
                v.sort_by(|a, b| a.0.cmp(&b.0));
                let mut out: Vec<(Cow<'a, str>, Cow<'a, str>)> = Vec::with_capacity(v.len());
                for p in v {
                    match out.last_mut() {
                        Some(last) if last.0 == p.0 => *last = p,
                        _ => out.push(p),
                    }
                }
                Ok(Pairs(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl Pairs<'_> {
    fn into_owned(self) -> Vec<(String, String)> {
        self.0
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }
}

/// A string borrowed from the body when it has no escapes.
struct Borrowed<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Borrowed<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Borrowed<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Borrowed(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Borrowed(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Borrowed(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
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

/// The newest `limit` entries of `log` in `[start, end)`, categorized; a
/// pipeline run in lokivl reads from the request's row budget and stops at
/// its deadline.
///
/// # Errors
/// Invalid pipelines (400), backend failures, malformed answers (502).
pub async fn fetch(
    state: &AppState,
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
    let body = if plan.has_proxy_stages() {
        let q = LogRange {
            start,
            end,
            limit,
            direction: Direction::Backward,
            categorize: true,
        };
        crate::query::log::log_range_bounded(
            &state.backend,
            ctx,
            &plan,
            q,
            &work.budgets.rows,
            work.deadline,
        )
        .await?
        .body
    } else {
        let req = Request::query(plan.query.clone(), start, end - 1).take(Take::Newest(limit));
        let mut raw = state.backend.send(ctx, &req).await?;
        let opts = StreamsOptions {
            direction: Direction::Backward,
            limit,
            categorize: true,
            parsed_prefix: plan.parsed_prefix,
        };
        let discovery = plan.discovery.clone();
        cpu::run(work.deadline, raw.len(), move |_| {
            let mut out = Vec::with_capacity(raw.len() + 1024);
            encode_streams_discovered(&mut raw, &opts, &discovery, &mut out)
                .map_err(|e| bad_gateway(e.to_string()))?;
            Ok::<_, ApiError>(out)
        })
        .await?
    };
    cpu::run(work.deadline, body.len(), move |_| parse_answer(&body)).await
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
                metadata: c.metadata.into_owned(),
                parsed: c.parsed.into_owned(),
            });
        }
        streams.push(Stream {
            labels: s.stream.into_owned(),
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

    #[test]
    fn pairs_are_sorted_unescaped_and_the_last_repeat_wins() {
        let body = br#"{"data":{"result":[{"stream":{"z":"1","a":"q\"x"},"values":[["5","l",{"structuredMetadata":{"k":"1","b":"2","k":"3"}}]]}]},"warnings":["w"]}"#;
        let f = parse_answer(body).unwrap();
        let s = &f.streams[0];
        assert_eq!(
            s.labels,
            vec![
                ("a".to_owned(), "q\"x".to_owned()),
                ("z".to_owned(), "1".to_owned())
            ]
        );
        assert_eq!(
            s.entries[0].metadata,
            vec![
                ("b".to_owned(), "2".to_owned()),
                ("k".to_owned(), "3".to_owned())
            ]
        );
        assert_eq!(f.warnings, ["w"]);
        assert!(parse_answer(br#"{"data":{"result":[{"stream":{"a":1},"values":[]}]}}"#).is_err());
    }
}

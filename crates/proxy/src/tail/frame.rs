//! Tail frames: VictoriaLogs NDJSON in, Loki's `{"streams":[…],"dropped_entries":[…]}` out.
//!
//! Entries go through the `query_range` decoders (plain or with proxy-side
//! pipeline stages) so a tail shows the same labels as a query; the typed
//! answer is then split into one entry per frame element, in time order,
//! which is how Loki's tailer sends them ([`engine::answer::tail`] writes them). With label discovery on, entries carry
//! `service_name` and `detected_level` exactly as a `query_range` answer
//! does (the plan records the settings).

use std::collections::BTreeMap;

use logsql_ast::LogPlan;

pub use engine::answer::tail::TailEntry as Entry;
use engine::direction::Direction;
use engine::discovery::SERVICE_NAME;
use engine::encode::streams::{StreamsOptions, decode_streams};
use engine::labels::{parse_stream, sanitize_label_name};
use engine::ndjson::Body;
use engine::pipeline::Pipeline;
use go::time::parse_rfc3339_nanos;

use crate::query::log::{RunParams, run};

/// Entries per frame, as Loki's `maxEntriesPerTailResponse`.
pub const MAX_ENTRIES_PER_FRAME: usize = 100;
/// Dropped entries reported per frame, as Loki's `maxDroppedEntriesPerTailResponse`.
pub const MAX_DROPPED_PER_FRAME: usize = 1000;

/// An entry dropped because the client read too slowly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Nanoseconds.
    pub ts: i64,
    /// Its stream labels (Loki names).
    pub labels: BTreeMap<String, String>,
}

impl Dropped {
    /// Reads `_time` and `_stream` from one raw NDJSON line.
    pub fn from_line(line: &[u8]) -> Option<Self> {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(rename = "_time", borrow)]
            time: std::borrow::Cow<'a, str>,
            #[serde(rename = "_stream", default, borrow)]
            stream: Option<std::borrow::Cow<'a, str>>,
        }
        let h: Head<'_> = serde_json::from_slice(line).ok()?;
        let ts = parse_rfc3339_nanos(&h.time)?;
        let mut labels = BTreeMap::new();
        if let Some(s) = h.stream
            && let Ok(pairs) = parse_stream(&s)
        {
            for (k, v) in pairs {
                if !k.is_empty() {
                    labels.insert(sanitize_label_name(&k).into_owned(), v.into_owned());
                }
            }
        }
        Some(Self { ts, labels })
    }

    /// Adds the `service_name` `discovery` derives, which Loki's dropped
    /// entries carry as the stream label it stored.
    pub fn discover(&mut self, discovery: &logsql_ast::Discovery) {
        if !discovery.service_name() || self.labels.contains_key(SERVICE_NAME) {
            return;
        }
        let name = engine::discovery::derive_service_name(
            discovery.service_name_labels.iter().map(String::as_str),
            |n| self.labels.get(n).map(String::as_str),
        )
        .to_owned();
        self.labels.insert(SERVICE_NAME.to_owned(), name);
    }
}

/// Turns batches of NDJSON lines into frame entries for one tail.
#[derive(Debug)]
pub struct Encoder {
    pipeline: Option<Pipeline>,
    parsed_prefix: Option<&'static str>,
    categorize: bool,
    discovery: logsql_ast::Discovery,
    /// The query is a bare selector (no stage at all).
    bare: bool,
}

impl Encoder {
    /// An encoder for `plan`.
    ///
    /// # Errors
    /// The pipeline's error text when its proxy stages are invalid.
    pub fn new(plan: &LogPlan, categorize: bool) -> Result<Self, String> {
        let pipeline = if plan.has_proxy_stages() {
            Some(
                Pipeline::new(&plan.proxy_stages)
                    .map_err(|e| e.to_string())?
                    .discovering(plan.discovery.clone()),
            )
        } else {
            None
        };
        Ok(Self {
            pipeline,
            parsed_prefix: plan.parsed_prefix,
            categorize,
            discovery: plan.discovery.clone(),
            bare: false,
        })
    }

    /// Marks the query as a bare selector. Loki's ingesters send the live
    /// entries of such a tail with their stream labels only: without
    /// `categorize-labels`, structured metadata is not merged into them as
    /// it is for the history and for any query with a stage (checked
    /// against Loki 3.7.8 by `tests/differential_tail.rs`).
    #[must_use]
    pub fn bare_selector(mut self, bare: bool) -> Self {
        self.bare = bare;
        self
    }

    /// Whether frames carry `encodingFlags`.
    pub fn categorize(&self) -> bool {
        self.categorize
    }

    /// Encodes a batch of NDJSON rows (any order) into entries in time
    /// order; `live` for entries tailed after the history.
    ///
    /// # Errors
    /// The decode or pipeline error text.
    pub async fn entries(
        &mut self,
        ndjson: impl Into<Body>,
        live: bool,
    ) -> Result<Vec<Entry>, String> {
        let ndjson: Body = ndjson.into();
        let stream_labels_only = live && self.bare && !self.categorize;
        let answer = match &mut self.pipeline {
            Some(p) => {
                let params = RunParams {
                    start: i64::MIN,
                    end: i64::MAX,
                    limit: usize::MAX,
                    direction: Direction::Forward,
                    categorize: self.categorize,
                    max_rows: usize::MAX,
                };
                let mut batch = Some(ndjson);
                run(p, params, move |_, _, _| {
                    let b = batch.take().unwrap_or_default();
                    std::future::ready(Ok(b))
                })
                .await
                .map_err(|e| e.to_string())?
            }
            None => {
                let mut ndjson = ndjson;
                // Categorized, the stream holds the stream labels alone;
                // the metadata element is cut below.
                let opts = StreamsOptions {
                    direction: Direction::Forward,
                    limit: usize::MAX,
                    categorize: self.categorize || stream_labels_only,
                    parsed_prefix: self.parsed_prefix,
                };
                decode_streams(&mut ndjson, &opts, &self.discovery).map_err(|e| e.to_string())?
            }
        };
        let mut entries = Entry::from_answer(&answer);
        if stream_labels_only {
            // Frames without `categorize-labels` show no entry labels.
            for e in &mut entries {
                e.labels.clear();
            }
        }
        Ok(entries)
    }
}

/// Writes one frame (see [`engine::answer::tail::write_frame`]).
pub fn write_frame(entries: &[Entry], dropped: &[Dropped], categorize: bool) -> String {
    engine::answer::tail::write_frame(
        entries,
        dropped
            .iter()
            .map(|d| (d.ts, d.labels.iter().map(|(n, v)| (n.as_str(), v.as_str())))),
        categorize,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use serde_json::Value;

    fn stream(a: &Entry) -> Value {
        let o: serde_json::Map<String, Value> = a
            .stream
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        Value::Object(o)
    }

    fn plan(q: &str) -> LogPlan {
        let logql_parser::Expr::Log(e) = logql_parser::parse(q).unwrap() else {
            panic!("not a log query")
        };
        logsql_ast::lower_log(&e, &logsql_ast::Discovery::default()).unwrap()
    }

    const ROWS: &str = concat!(
        r#"{"_time":"2026-01-01T00:00:02Z","_stream_id":"s2","_stream":"{app=\"b\"}","_msg":"second","app":"b"}"#,
        "\n",
        r#"{"_time":"2026-01-01T00:00:01Z","_stream_id":"s1","_stream":"{app=\"a\"}","_msg":"first level=error","app":"a","trace_id":"t1"}"#,
        "\n",
    );

    #[tokio::test]
    async fn entries_in_time_order_one_element_each() {
        let mut enc = Encoder::new(&plan(r#"{app=~"a|b"}"#), false).unwrap();
        let entries = enc.entries(BytesMut::from(ROWS), false).await.unwrap();
        let frame = write_frame(&entries, &[], false);
        assert_eq!(
            frame,
            concat!(
                r#"{"streams":[{"stream":{"app":"a","trace_id":"t1"},"values":[["1767225601000000000","first level=error"]]},"#,
                r#"{"stream":{"app":"b"},"values":[["1767225602000000000","second"]]}]}"#
            )
        );
    }

    #[tokio::test]
    async fn live_entries_of_a_bare_selector_carry_stream_labels_only() {
        let mut enc = Encoder::new(&plan(r#"{app=~"a|b"}"#), false)
            .unwrap()
            .bare_selector(true);
        // History: metadata merged, as query_range.
        let history = enc.entries(BytesMut::from(ROWS), false).await.unwrap();
        assert_eq!(
            stream(&history[0]),
            serde_json::json!({"app": "a", "trace_id": "t1"})
        );
        // Live: stream labels only, two-element values.
        let live = enc.entries(BytesMut::from(ROWS), true).await.unwrap();
        let frame = write_frame(&live, &[], false);
        assert_eq!(
            frame,
            concat!(
                r#"{"streams":[{"stream":{"app":"a"},"values":[["1767225601000000000","first level=error"]]},"#,
                r#"{"stream":{"app":"b"},"values":[["1767225602000000000","second"]]}]}"#
            )
        );
        // A query with a stage, or categorized frames: unchanged.
        let mut staged = Encoder::new(&plan(r#"{app=~"a|b"} |= "e""#), false).unwrap();
        let live = staged.entries(BytesMut::from(ROWS), true).await.unwrap();
        assert_eq!(
            stream(&live[0]),
            serde_json::json!({"app": "a", "trace_id": "t1"})
        );
        let mut cat = Encoder::new(&plan(r#"{app=~"a|b"}"#), true)
            .unwrap()
            .bare_selector(true);
        let live = cat.entries(BytesMut::from(ROWS), true).await.unwrap();
        let v: Value = serde_json::from_str(&write_frame(&live, &[], true)).unwrap();
        assert_eq!(v["streams"][0]["values"][0].as_array().unwrap().len(), 3);
    }

    #[tokio::test]
    async fn categorized_and_proxy_stages() {
        let mut enc =
            Encoder::new(&plan(r#"{app=~"a|b"} | logfmt | level="error""#), true).unwrap();
        let entries = enc.entries(BytesMut::from(ROWS), false).await.unwrap();
        assert_eq!(entries.len(), 1);
        let frame = write_frame(&entries, &[], true);
        let v: Value = serde_json::from_str(&frame).unwrap();
        assert_eq!(v["streams"][0]["stream"], serde_json::json!({"app": "a"}));
        assert_eq!(v["streams"][0]["values"][0][1], "first level=error");
        assert_eq!(v["streams"][0]["values"][0][2]["parsed"]["level"], "error");
        assert_eq!(v["encodingFlags"][0], "categorize-labels");
    }

    fn discovering(q: &str) -> LogPlan {
        let logql_parser::Expr::Log(e) = logql_parser::parse(q).unwrap() else {
            panic!("not a log query")
        };
        let d = logsql_ast::Discovery {
            service_name_labels: vec!["service".into(), "app".into()],
            log_levels: true,
        };
        logsql_ast::lower_log(&e, &d).unwrap()
    }

    #[tokio::test]
    async fn discovered_labels_as_in_a_log_answer() {
        let mut enc = Encoder::new(&discovering(r#"{service_name=~"a|b"}"#), false).unwrap();
        let entries = enc.entries(BytesMut::from(ROWS), false).await.unwrap();
        assert_eq!(
            write_frame(&entries, &[], false),
            concat!(
                r#"{"streams":[{"stream":{"app":"a","detected_level":"error","service_name":"a","trace_id":"t1"},"values":[["1767225601000000000","first level=error"]]},"#,
                r#"{"stream":{"app":"b","detected_level":"unknown","service_name":"b"},"values":[["1767225602000000000","second"]]}]}"#
            )
        );
        // Categorized: `detected_level` is structured metadata, `service_name` a stream label.
        let mut enc = Encoder::new(&discovering(r#"{service_name=~"a|b"}"#), true).unwrap();
        let entries = enc.entries(BytesMut::from(ROWS), false).await.unwrap();
        let v: Value = serde_json::from_str(&write_frame(&entries, &[], true)).unwrap();
        assert_eq!(
            v["streams"][0]["stream"],
            serde_json::json!({"app": "a", "service_name": "a"})
        );
        assert_eq!(
            v["streams"][0]["values"][0][2]["structuredMetadata"],
            serde_json::json!({"detected_level": "error", "trace_id": "t1"})
        );
        // Proxy-side stages see and keep the synthesized labels.
        let mut enc = Encoder::new(
            &discovering(r#"{service_name=~"a|b"} | detected_level="unknown""#),
            false,
        )
        .unwrap();
        let entries = enc.entries(BytesMut::from(ROWS), false).await.unwrap();
        assert_eq!(
            write_frame(&entries, &[], false),
            r#"{"streams":[{"stream":{"app":"b","detected_level":"unknown","service_name":"b"},"values":[["1767225602000000000","second"]]}]}"#
        );
    }

    #[test]
    fn dropped_entries_get_the_derived_service_name() {
        let line = ROWS.lines().next().unwrap();
        let mut d = Dropped::from_line(line.as_bytes()).unwrap();
        d.discover(&logsql_ast::Discovery::default());
        assert_eq!(d.labels.len(), 1);
        d.discover(&discovering("{app=\"b\"}").discovery);
        let want: BTreeMap<String, String> = [("app", "b"), ("service_name", "b")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into();
        assert_eq!(d.labels, want);
        let mut none = Dropped {
            ts: 1,
            labels: [("env".to_owned(), "x".to_owned())].into(),
        };
        none.discover(&discovering("{app=\"b\"}").discovery);
        assert_eq!(none.labels["service_name"], "unknown_service");
    }

    #[test]
    fn dropped_entries_are_reported() {
        let line = ROWS.lines().next().unwrap();
        let d = Dropped::from_line(line.as_bytes()).unwrap();
        assert_eq!(d.ts, 1_767_225_602_000_000_000);
        let frame = write_frame(&[], &[d], false);
        assert_eq!(
            frame,
            r#"{"streams":[],"dropped_entries":[{"timestamp":"1767225602000000000","labels":{"app":"b"}}]}"#
        );
    }
}

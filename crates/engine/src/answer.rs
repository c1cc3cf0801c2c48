//! The answer of a log query as a typed value, and the one writer of its
//! Loki shapes.
//!
//! Every stage that produces log entries (the direct NDJSON encoder, the
//! proxy pipeline, the window merge) builds a [`LogAnswer`]: streams of
//! entries with their labels, plus `warnings` and the counters behind
//! `stats`. Every stage that consumes one (windows, the window cache, the
//! live tail, Drilldown) reads the typed value; none parses JSON that
//! another stage wrote. [`encode`] is the only writer of Loki's `streams`
//! answer and of tail frames.
//!
//! Metric queries and the volume answers build a [`MetricAnswer`]: the
//! metric engine's typed series plus the shape, step times and `stats`.
//! [`encode::metric`] is the only writer of Loki's `matrix`, `vector` and
//! `scalar` answers.
//!
//! ```
//! use engine::answer::{LogAnswer, encode};
//!
//! let mut a = LogAnswer::new(false);
//! a.begin_stream();
//! a.push_stream_label("app", "api");
//! a.push_entry(1, "hello <world>");
//! let mut out = Vec::new();
//! encode::write_streams(&a, std::time::Instant::now(), &mut out);
//! assert!(out.starts_with(br#"{"status":"success","data":{"resultType":"streams","result":[{"stream":{"app":"api"},"values":[["1","hello \u003cworld\u003e"]]}],"stats":"#));
//! ```

pub mod codec;
pub mod encode;
pub mod log;
pub mod matrix_codec;
pub mod metric;
pub mod stored;
pub mod tail;

pub use log::{Category, EntryRef, LogAnswer, LogStats, StreamRef};
pub use metric::{MetricAnswer, MetricResult, Steps};
pub use stored::{StoredEntry, StoredLog, StoredStream, StoredView};

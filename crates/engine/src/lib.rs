//! lokivl's query engine: VictoriaLogs rows in, Loki answers out.
//!
//! The service (`proxy`) parses LogQL, plans it into LogsQL and fetches the
//! rows from VictoriaLogs; everything it then does with those rows is here,
//! in the order of the data path:
//!
//! * [`ndjson`] decodes VictoriaLogs' NDJSON (log rows and `stats` rows)
//!   into rows borrowed from the body, without an allocation per row.
//! * [`labels`] reads VictoriaLogs' `_stream` and writes Loki's label
//!   strings; [`discovery`] adds what Loki's ingest would have added
//!   (`service_name`, `detected_level`, OTel attribute names).
//! * [`pipeline`] runs the LogQL stages VictoriaLogs cannot compute exactly
//!   (parsers, formatters, label filters) with Loki's semantics, line by line.
//! * [`metric`] evaluates metric queries over per-bucket statistics or raw
//!   rows: range aggregations, vector operators, binary operations.
//! * [`drilldown`] computes Grafana Logs Drilldown's detected fields and
//!   log patterns.
//! * [`encode`] writes every Loki JSON answer shape.
//! * [`tie`] orders entries with equal timestamps as Loki does at a limit.
//! * [`page`] puts the log path together for one page of rows: decode,
//!   discover, run the pipeline, keep the entries the answer is written from.
//!
//! The engine does no I/O and has no async runtime: each step is a plain
//! function over bytes already fetched, so it can be tested and
//! benchmarked without a server, and the service decides where it runs
//! (its blocking pool). Long walks poll a [`work::Stop`] so a request past
//! its deadline ends.
//!
//! ```
//! use engine::pipeline::Pipeline;
//!
//! // The stages of `{app="api"} | logfmt | level="error" | line_format "{{.msg}}"`,
//! // run over one row of stream `{app="api"}` as VictoriaLogs returned it.
//! let query = r#"{app="api"} | logfmt | level="error" | line_format "{{.msg}}""#;
//! let logql_parser::Expr::Log(q) = logql_parser::parse(query).unwrap() else {
//!     unreachable!("a log query")
//! };
//! let mut p = Pipeline::new(&q.pipeline).unwrap();
//! let stream = [("app", "api")];
//! assert!(p.process(1, "level=error msg=boom", stream, std::iter::empty()));
//! assert_eq!(p.line(), "boom");
//! // A line the label filter drops.
//! assert!(!p.process(2, "level=info msg=ok", stream, std::iter::empty()));
//! ```

pub mod answer;
pub mod direction;
pub mod discovery;
pub mod drilldown;
pub mod encode;
pub mod error;
pub mod labels;
pub mod metric;
pub mod ndjson;
pub mod page;
pub mod pipeline;
mod recycle;
pub mod tie;
pub mod work;

pub use error::Error;

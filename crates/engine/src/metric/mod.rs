//! The metric query engine: typed series, the sliding-window combiner over
//! VictoriaLogs buckets, vector operators and Loki's JSON answers.
//!
//! Evaluation is split in three so the operators stay synchronous and
//! testable: [`plan::collect`] walks the LogQL tree and lists every range
//! aggregation with the labels its parents need; the handler fetches each
//! one from VictoriaLogs (per-bucket statistics, rarely raw values); then
//! [`eval::evaluate`] computes the tree over the step grid from those
//! inputs. Number literals and `vector()` need no fetch at all (Grafana's
//! health check `vector(1)+vector(1)`).

pub mod aggregate;
pub mod binary;
pub mod buckets;
pub mod discovered;
pub mod domain;
pub mod error;
pub mod eval;
pub mod grid;
pub mod label_replace;
pub mod optimize;
pub mod plan;
pub mod raw;
pub mod rows;
pub mod series;
pub mod window;

pub use error::EngineError;
pub use grid::Grid;
pub use series::{Labels, Matrix, Point, Series, Value};

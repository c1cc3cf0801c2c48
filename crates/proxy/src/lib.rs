//! lokivl: Loki's HTTP API served on top of VictoriaLogs.
//!
//! A request flows parse → plan → backend → decode → encode: the LogQL text
//! is parsed by [`logql_parser`], lowered to a typed LogsQL plan by
//! [`logsql_ast`], sent to VictoriaLogs by [`backend`], and the NDJSON answer
//! is decoded ([`ndjson`]) and written as Loki JSON ([`encode`]).

pub mod app;
pub mod backend;
pub mod config;
pub mod context;
pub mod error;
pub mod handler;
pub mod limits;
pub mod telemetry;
pub mod params;
pub mod push;
pub mod query;
pub mod response_cache;
pub mod route;
pub mod server;
pub mod tail;
pub mod tenant;
pub mod window;
pub mod work;

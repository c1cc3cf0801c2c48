//! lokivl, the service: Loki's HTTP API served on top of VictoriaLogs.
//!
//! This crate is only the service around the engine. A request goes down
//! the layers in this order, and each layer is a folder:
//!
//! 1. [`server`] accepts the connection (plain or TLS, one serve loop) and
//!    [`route`] names, for every Loki path, its handler and cache policy;
//!    [`tenant`] resolves `X-Scope-OrgID`, [`context`] fixes everything
//!    that changes the answer into one [`context::RequestContext`], and
//!    [`response_cache`] answers repeated requests from stored bytes.
//! 2. [`handler`] reads Loki's parameters ([`params`]), parses the LogQL
//!    ([`logql_parser`]) and plans it ([`logsql_ast`]).
//! 3. [`query`], [`window`] and [`tail`] orchestrate the fetches: pages of
//!    rows, windows of a long range (each cached), a live tail.
//! 4. [`backend`] sends typed [`backend::Request`]s to VictoriaLogs, the
//!    only place a LogsQL form is printed; [`tenant`] fans a multi-tenant
//!    request out.
//! 5. The rows go to the engine ([`engine`]) on the blocking pool
//!    ([`work`]), which decodes them, runs what VictoriaLogs cannot compute
//!    exactly and writes Loki's JSON; [`error`] maps every failure once to
//!    Loki's status and text.
//!
//! `docs/architecture.md` draws the path. A request that needs no data
//! (here `format_query`) shows the service without a VictoriaLogs:
//!
//! ```
//! use tower::ServiceExt;
//!
//! let settings = proxy::config::Settings::new("http://127.0.0.1:9428").unwrap();
//! let app = proxy::app::router(settings).unwrap();
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! let resp = rt.block_on(async {
//!     let req = http::Request::get("/loki/api/v1/format_query?query=%7Bapp%3D%22api%22%7D%7C%3D%22x%22")
//!         .body(axum::body::Body::empty())
//!         .unwrap();
//!     app.oneshot(req).await.unwrap()
//! });
//! assert_eq!(resp.status(), 200);
//! ```

pub mod app;
pub mod backend;
pub mod config;
pub mod context;
pub mod error;
pub mod handler;
pub mod limits;
pub mod params;
pub mod push;
pub mod query;
pub mod response_cache;
pub mod route;
pub mod server;
pub mod tail;
pub mod telemetry;
pub mod tenant;
pub mod window;
pub mod work;

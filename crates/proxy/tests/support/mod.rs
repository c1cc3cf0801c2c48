//! The test kit every suite mounts (`#[path = "../support/mod.rs"] mod support;`).
//!
//! It holds one of each thing a suite needs around lokivl:
//! - [`client`]: the one HTTP client and its one [`client::Answer`] (the
//!   load benchmark includes the same file);
//! - [`lokivl`]: lokivl in-process ([`lokivl::start_proxy`] and friends) or
//!   as the built binary ([`lokivl::Lokivl`]);
//! - [`fake_vl`]: the one fake VictoriaLogs, whose modes a test picks
//!   with [`fake_vl::FakeVl::builder`]: canned answers per path with every
//!   request recorded, rows from a dataset, a streaming
//!   `/select/logsql/tail`, raw-TCP faults (hung, slow, garbage, truncated,
//!   killed), HTTPS; [`tls`] holds the test PKI and the HTTPS client,
//!   [`tail`] the WebSocket tail clients;
//! - [`backend`]: the real VictoriaLogs launcher (`LOKIVL_VL_BIN`), and the
//!   tap that records its exchanges as goldens or replays them;
//! - [`loki`]: the real Loki launcher (`LOKIVL_LOKI_BIN`);
//! - the datasets ([`dataset`], [`realistic`], [`otlp`]) and the
//!   differential machinery ([`differential`], [`compare`], [`variants`],
//!   [`suite_run`], [`checks`]); [`topup`] adds the exchanges a changed
//!   translation needs to the goldens (`LOKIVL_RECORD_GOLDEN=missing`).
#![allow(dead_code, unused_imports, unreachable_pub, missing_docs)]

pub mod backend;
pub mod checks;
pub mod client;
pub mod compare;
pub mod dataset;
pub mod differential;
pub mod fake_vl;
pub mod loki;
pub mod lokivl;
pub mod otlp;
pub mod realistic;
pub mod suite_run;
pub mod tail;
pub mod tls;
pub mod topup;
pub mod variants;

pub use lokivl::{start_lokivl, start_lokivl_with};

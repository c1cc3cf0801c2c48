//! Live tail: Loki's `/loki/api/v1/tail` WebSocket on top of VictoriaLogs'
//! `/select/logsql/tail` (streaming NDJSON over plain HTTP).
//!
//! On connect the newest `limit` entries since `start` are sent (as Loki's
//! querier does), then new entries as VictoriaLogs finds them. Entries are
//! encoded with the same code as `query_range` (so labels, structured
//! metadata and proxy-side pipeline stages match), batched at most 100 per
//! text frame, one `streams` element per entry in time order as Loki sends
//! them. A bounded queue sits between VictoriaLogs and the socket: when
//! the client reads too slowly, entries are dropped and reported in
//! `dropped_entries` instead of piling up in memory, and a client that
//! takes nothing for `--tail-write-timeout` is disconnected ([`pump`]).
//! Tails are capped per tenant and over all tenants ([`slots`]), their
//! VictoriaLogs rows by size ([`reader`]), and what a client may send by
//! [`pump::MAX_CLIENT_MESSAGE`].

pub mod config;
pub mod frame;
pub mod origin;
pub mod pump;
pub mod reader;
pub mod session;
pub mod slots;
pub mod upstream;

pub use self::config::{TailFlags, TailSettings};

use crate::backend::Backend;

/// Everything the tail handler needs; cheap to clone.
#[derive(Debug, Clone)]
pub struct TailState {
    /// The pooled VictoriaLogs client, for the history part.
    pub backend: Backend,
    /// The streaming client for `/select/logsql/tail`.
    pub upstream: upstream::Upstream,
    /// Limits and the origin allow-list.
    pub settings: std::sync::Arc<TailSettings>,
    /// Running tails per tenant.
    pub slots: slots::Slots,
}

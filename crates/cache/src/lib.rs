//! An in-memory cache of final HTTP response bodies with in-flight
//! deduplication.
//!
//! lokivl answers Loki API requests by querying VictoriaLogs. Grafana sends the
//! same query from many panels and many users at once, so the proxy keeps the
//! finished response bytes here: concurrent requests for one [`CacheKey`]
//! cause exactly one upstream fetch, later requests are answered from memory
//! until the entry's own TTL runs out, and the total size is bounded in bytes.
//!
//! The crate knows nothing about LogQL: a key is the tenant, the response
//! encoding, a fingerprint of the caller's credentials, the endpoint and a
//! request string the proxy has already normalised. Keys from different
//! tenants or credentials never compare equal, so one tenant can never be
//! served another's entry.
//!
//! ```
//! use std::{convert::Infallible, time::Duration};
//! use bytes::Bytes;
//! use cache::{Cache, CacheKey, CredentialFingerprint, Encoding, Fetched, Outcome, Settings};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let cache = Cache::new(Settings { max_bytes: 64 << 20 });
//! let key = CacheKey::new(
//!     "tenant-a",
//!     Encoding::Identity,
//!     "categorize-labels",
//!     CredentialFingerprint::none(),
//!     "/loki/api/v1/labels",
//!     "start=0&end=3600",
//! );
//! let fetch = async {
//!     Ok::<_, Infallible>(Fetched::new(Bytes::from_static(b"{}"), Duration::from_secs(30)))
//! };
//! let first = cache.get_or_fetch(key.clone(), fetch).await.unwrap();
//! assert_eq!(first.outcome, Outcome::Miss);
//! let fetch_again = async { unreachable!("served from the cache") };
//! let second = cache.get_or_fetch::<_, Infallible>(key, fetch_again).await.unwrap();
//! assert_eq!(second.outcome, Outcome::Hit);
//! assert_eq!(second.body, first.body);
//! # }
//! ```

mod cache;
mod entry;
mod error;
mod key;
mod lifetime;
pub mod shared;
mod stats;
mod wanted;

pub use cache::{Cache, Lookup, Outcome, Settings};
pub use entry::Fetched;
pub use error::Error;
pub use key::{CacheKey, CredentialFingerprint, Encoding};
pub use lifetime::Lifetimes;
pub use shared::{SharedConfig, SharedStats, SharedTier};
pub use stats::Stats;

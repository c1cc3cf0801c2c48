//! Which of several entries with the same timestamp Loki keeps at a limit.
//!
//! Loki merges the entries of a log query with a loser tree ordered by
//! timestamp (descending for `backward`, ascending for `forward`) and,
//! for equal timestamps, by the *stream hash* in ascending order in both
//! directions (grafana/loki `pkg/iter/entry_iterator.go`, `lessAscending`
//! and `lessDescending`). The stream hash is the hash of the entry's base
//! stream, the label set it was pushed with (`BaseLabels().Hash()` in
//! `pkg/chunkenc/memchunk.go`), which is Prometheus' `labels.Hash`: XXH64
//! (seed 0) of every `name 0xff value 0xff`, labels sorted by name.
//!
//! So when `limit` cuts through entries of several streams that share a
//! timestamp (common with second-precision timestamps), Loki keeps those
//! of the streams with the smallest hashes, not the first in label order
//! nor the first VictoriaLogs returned. Observed on Loki 3.7.8: five
//! streams `{app=…, namespace="dev", shard=…}` with one entry each at one
//! timestamp, `limit=1` keeps `cron`, `limit=2` adds `db`, `limit=3` adds
//! `api`, the hash order below, in both directions.
//!
//! Entries of one base stream share its hash; Loki then keeps them in the
//! order the stream stores them, which is the order VictoriaLogs returned.
//! A multi-tenant query (`tenant1|tenant2`) adds `__tenant_id__` to the
//! labels but not to the hash (`TenantEntryIterator` in
//! `pkg/querier/multi_tenant_querier.go`), and equal hashes then order by
//! label string, which for one stream of several tenants is the tenant id:
//! [`stream_hash`] skips that label and [`order_key`] breaks the tie with
//! [`TENANT_LABEL`]'s value.
//!
//! ```
//! use engine::direction::Direction;
//! use engine::tie::{order_key, stream_hash};
//!
//! let api = stream_hash([("app", "api"), ("namespace", "dev"), ("shard", "4")]);
//! let cron = stream_hash([("app", "cron"), ("namespace", "dev"), ("shard", "6")]);
//! // Same timestamp: the smaller hash comes first, whatever the direction.
//! assert!(order_key(Direction::Backward, 7, cron, "") < order_key(Direction::Backward, 7, api, ""));
//! assert!(order_key(Direction::Forward, 7, cron, "") < order_key(Direction::Forward, 7, api, ""));
//! // Otherwise time decides.
//! assert!(order_key(Direction::Backward, 8, api, "") < order_key(Direction::Backward, 7, cron, ""));
//! ```

use std::cmp::Reverse;

use xxhash_rust::xxh64::Xxh64;

use crate::direction::Direction;

/// The label a multi-tenant query adds to every stream, outside the hash.
pub const TENANT_LABEL: &str = "__tenant_id__";

/// Loki's stream hash of a label set given sorted by name, with Loki's
/// label names (Prometheus' `labels.Hash`), [`TENANT_LABEL`] left out.
pub fn stream_hash<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> u64 {
    let mut h = StreamHasher::new();
    for (n, v) in labels {
        h.label(n.as_bytes(), v.as_bytes());
    }
    h.finish()
}

/// [`stream_hash`] fed piece by piece, for names written while hashing.
pub struct StreamHasher(Xxh64);

impl StreamHasher {
    /// An empty label set.
    pub fn new() -> Self {
        Self(Xxh64::new(0))
    }

    /// Adds one label (the next in name order); [`TENANT_LABEL`] is skipped.
    pub fn label(&mut self, name: &[u8], value: &[u8]) {
        if name == TENANT_LABEL.as_bytes() {
            return;
        }
        self.0.update(name);
        self.0.update(&[0xff]);
        self.0.update(value);
        self.0.update(&[0xff]);
    }

    /// The hash of the labels added.
    pub fn finish(&self) -> u64 {
        self.0.digest()
    }
}

impl Default for StreamHasher {
    fn default() -> Self {
        Self::new()
    }
}

/// A key whose ascending order is Loki's merge order of entries: time in
/// `direction`, then the stream hash, then the stream's [`TENANT_LABEL`]
/// value (empty outside multi-tenant queries). Sorting by it (stably, or
/// with the row index last) and cutting at `limit` keeps what Loki keeps.
pub fn order_key(
    direction: Direction,
    ts: i64,
    stream_hash: u64,
    tenant: &str,
) -> (Reverse<i64>, u64, &str) {
    match direction {
        // `Reverse` of the negation would overflow on i64::MIN; reversing
        // the bits maps ascending to descending exactly.
        Direction::Forward => (Reverse(!ts), stream_hash, tenant),
        Direction::Backward => (Reverse(ts), stream_hash, tenant),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values: Go's `github.com/cespare/xxhash/v2` over
    /// `name 0xff value 0xff …`, as Prometheus' `labels.Hash` computes it.
    #[test]
    fn hashes_are_prometheus_label_hashes() {
        let cases = [
            ("api", "4", 3_462_017_678_210_951_106u64),
            ("batch", "5", 11_233_502_876_396_196_453),
            ("cron", "6", 1_104_480_443_710_028_285),
            ("db", "7", 1_687_301_760_442_141_666),
            ("edge", "8", 14_364_598_883_428_464_234),
        ];
        for (app, shard, want) in cases {
            let got = stream_hash([("app", app), ("namespace", "dev"), ("shard", shard)]);
            assert_eq!(got, want, "{app}");
        }
        let with_service = stream_hash([
            ("app", "api"),
            ("namespace", "dev"),
            ("service_name", "api"),
            ("shard", "4"),
        ]);
        assert_eq!(with_service, 17_667_772_980_774_010_316);
        let of_tenant = stream_hash([
            ("__tenant_id__", "2"),
            ("app", "api"),
            ("namespace", "dev"),
            ("shard", "4"),
        ]);
        assert_eq!(of_tenant, 3_462_017_678_210_951_106);
    }

    /// Loki 3.7.8 kept cron, then db, then api of these five streams at
    /// one timestamp, in both directions.
    #[test]
    fn ties_follow_the_order_loki_keeps() {
        let apps = [
            ("api", "4"),
            ("batch", "5"),
            ("cron", "6"),
            ("db", "7"),
            ("edge", "8"),
        ];
        for direction in [Direction::Backward, Direction::Forward] {
            let mut v: Vec<(&str, u64)> = apps
                .iter()
                .map(|(a, s)| {
                    (
                        *a,
                        stream_hash([("app", *a), ("namespace", "dev"), ("shard", *s)]),
                    )
                })
                .collect();
            v.sort_by_key(|&(_, h)| order_key(direction, 5, h, ""));
            let names: Vec<&str> = v.iter().map(|(a, _)| *a).collect();
            assert_eq!(&names[..3], ["cron", "db", "api"], "{direction:?}");
        }
    }

    #[test]
    fn time_orders_first_in_each_direction_even_at_the_extremes() {
        for (a, b) in [(i64::MIN, i64::MIN + 1), (-1, 0), (0, i64::MAX)] {
            assert!(
                order_key(Direction::Forward, a, 9, "") < order_key(Direction::Forward, b, 0, "")
            );
            assert!(
                order_key(Direction::Backward, b, 9, "") < order_key(Direction::Backward, a, 0, "")
            );
        }
    }
}

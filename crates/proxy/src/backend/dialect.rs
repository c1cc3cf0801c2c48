//! What the VictoriaLogs release behind lokivl means by LogsQL whose meaning
//! changed between releases, where no spelling means the same on all of them.
//!
//! One such construct is left: the `offset` of time buckets. For
//! `stats by (_time:g offset o)`, v1.26 starts buckets at `+o` (mod `g`):
//! it truncates `t − o` and adds `o` back. v1.51 reads `o` as a timezone
//! offset and starts them at `−o` (mod `g`): it truncates `t + o` and takes
//! `o` off. Only `o ≡ −o` (0 and `g/2`) means the same to both, and Loki's
//! windows need buckets starting one nanosecond after a step, which is
//! almost never such an offset.
//!
//! The rule is learnt from the server, not from its version string: a server
//! built from source reports an empty `vm_app_version`, and the change is
//! not named in VictoriaLogs' changelog. Before the first bucketed query,
//! and again after the circuit breaker saw VictoriaLogs come back, one
//! [`PROBE`] asks for any single entry bucketed by 3 ns with offset 1 ns;
//! the bucket's start (1 or 2 mod 3) names the rule. A probe that finds no
//! entry (an empty tenant) or fails teaches nothing, and is repeated at the
//! next bucketed query; meanwhile queries are written in the current
//! releases' rule. Every bucketed answer is checked as well: each bucket
//! is labelled with its start, so an answer whose buckets start elsewhere
//! than asked (a server upgraded in place) switches the rule and is asked
//! again ([`alignment`]).
//!
//! `end` also changed meaning, but has a spelling both read alike
//! ([`exact_end`]): v1.26 takes the `end` argument as inclusive and widens
//! it to the end of its last written unit (an `end` on a whole second takes
//! in the whole next second but one nanosecond), v1.36 and later take it as
//! exclusive. A `_time:<X` filter means `t < X` to the nanosecond on both.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use time::OffsetDateTime;
use time::macros::format_description;

/// The `end` argument and the filter that select `t <= last_ns` on every
/// VictoriaLogs release: `end` is the exclusive bound of v1.36+ (v1.26 reads
/// it as inclusive and a little wider), and the filter `_time:<end`, an
/// RFC 3339 time with all nine fraction digits, cuts v1.26 back to it.
pub fn exact_end(last_ns: i64) -> (String, String) {
    let end = last_ns.saturating_add(1);
    (end.to_string(), format!("_time:<{}", rfc3339_nanos(end)))
}

/// `ns` as `YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ` (UTC, nine fraction digits, so
/// that no release rounds it to a coarser unit).
fn rfc3339_nanos(ns: i64) -> String {
    let fmt =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:9]Z");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns))
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        // Unreachable for i64 nanoseconds (years 1677–2262).
        .unwrap_or_else(|| "2262-04-11T23:47:16.854775807Z".to_owned())
}

/// Where `stats by (_time:g offset o)` starts its buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetRule {
    /// At `+o` (mod `g`): VictoriaLogs v1.26 and older.
    Plus,
    /// At `−o` (mod `g`), `o` a timezone offset: VictoriaLogs v1.51.
    Minus,
}

impl OffsetRule {
    /// The rule of current releases, assumed until an answer shows otherwise.
    pub const CURRENT: OffsetRule = OffsetRule::Minus;

    /// The `offset` to write so that buckets of `bucket_ns` start at
    /// `start_ns` (mod `bucket_ns`); always in `[0, bucket_ns)`.
    pub fn offset_for(self, start_ns: i64, bucket_ns: i64) -> i64 {
        match self {
            OffsetRule::Plus => start_ns.rem_euclid(bucket_ns),
            OffsetRule::Minus => start_ns.wrapping_neg().rem_euclid(bucket_ns),
        }
    }

    /// The other rule.
    pub fn other(self) -> OffsetRule {
        match self {
            OffsetRule::Plus => OffsetRule::Minus,
            OffsetRule::Minus => OffsetRule::Plus,
        }
    }

    /// The name in lokivl's `/metrics`.
    pub fn name(self) -> &'static str {
        match self {
            OffsetRule::Plus => "plus",
            OffsetRule::Minus => "minus",
        }
    }
}

/// What the bucket starts of one answer say about the rule that made them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alignment {
    /// Every bucket starts where it was asked to: the rule used is the server's.
    Aligned,
    /// The buckets start elsewhere: the server follows the other rule.
    Misaligned,
    /// No buckets, or an offset both rules read alike: right under either.
    Silent,
}

/// Checks the bucket `starts` of an answer asked for buckets of `bucket_ns`
/// starting at `want_ns` (mod `bucket_ns`) with `offset_ns` written.
pub fn alignment(
    starts: impl IntoIterator<Item = i64>,
    want_ns: i64,
    offset_ns: i64,
    bucket_ns: i64,
) -> Alignment {
    if offset_ns.rem_euclid(bucket_ns) == offset_ns.wrapping_neg().rem_euclid(bucket_ns) {
        return Alignment::Silent;
    }
    let mut seen = Alignment::Silent;
    for s in starts {
        if (s - want_ns).rem_euclid(bucket_ns) != 0 {
            return Alignment::Misaligned;
        }
        seen = Alignment::Aligned;
    }
    seen
}

const UNKNOWN: u8 = 0;
const PLUS: u8 = 1;
const MINUS: u8 = 2;

/// The probe: any one entry, bucketed by 3 ns with offset 1 ns. Its bucket
/// starts at 1 (mod 3) under [`OffsetRule::Plus`], at 2 under
/// [`OffsetRule::Minus`]. `limit 1` stops the search at the first entry.
pub const PROBE: &str = "* | limit 1 | stats by (_time:3ns offset 1ns) count() as n";

/// The rule a [`PROBE`] answer shows; `None` without an entry.
pub fn rule_of_probe(body: &[u8]) -> Option<OffsetRule> {
    #[derive(serde::Deserialize)]
    struct Row<'a> {
        #[serde(rename = "_time", borrow)]
        time: std::borrow::Cow<'a, str>,
    }
    let line = body.split(|&b| b == b'\n').find(|l| !l.is_empty())?;
    let row: Row<'_> = serde_json::from_slice(line).ok()?;
    match go::time::parse_rfc3339_nanos(&row.time)?.rem_euclid(3) {
        1 => Some(OffsetRule::Plus),
        2 => Some(OffsetRule::Minus),
        _ => None,
    }
}

#[derive(Debug, Default)]
struct Inner {
    offset_rule: AtomicU8,
    /// Held while a probe runs, so concurrent first queries wait for one probe.
    probing: tokio::sync::Mutex<()>,
}

/// The rules learnt about one VictoriaLogs, shared by every clone of its client.
#[derive(Debug, Clone, Default)]
pub struct Dialect {
    inner: Arc<Inner>,
}

impl Dialect {
    /// The offset rule last seen, if any.
    pub fn offset_rule(&self) -> Option<OffsetRule> {
        match self.inner.offset_rule.load(Ordering::Relaxed) {
            PLUS => Some(OffsetRule::Plus),
            MINUS => Some(OffsetRule::Minus),
            _ => None,
        }
    }

    /// Records the rule the server showed; `true` if it differs from the one known before.
    pub fn learn_offset_rule(&self, rule: OffsetRule) -> bool {
        let v = match rule {
            OffsetRule::Plus => PLUS,
            OffsetRule::Minus => MINUS,
        };
        let before = self.inner.offset_rule.swap(v, Ordering::Relaxed);
        before != v && before != UNKNOWN
    }

    /// Forgets the rule (VictoriaLogs came back, perhaps another release).
    pub fn forget(&self) {
        self.inner.offset_rule.store(UNKNOWN, Ordering::Relaxed);
    }

    /// Waits for a running probe and holds off others until the guard drops.
    pub async fn probing(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.inner.probing.lock().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: i64 = 60_000_000_000;

    /// The bucket start of `t` as VictoriaLogs v1.26 computes it (`truncateTimestamp`).
    fn v126_start_g(t: i64, offset: i64, g: i64) -> i64 {
        let x = t - offset;
        x - x.rem_euclid(g) + offset
    }

    /// The bucket start of `t` as VictoriaLogs v1.51 computes it.
    fn v151_start_g(t: i64, offset: i64, g: i64) -> i64 {
        let x = t + offset;
        x - x.rem_euclid(g) - offset
    }

    fn v126_start(t: i64, offset: i64) -> i64 {
        v126_start_g(t, offset, G)
    }

    fn v151_start(t: i64, offset: i64) -> i64 {
        v151_start_g(t, offset, G)
    }

    #[test]
    fn each_rule_writes_the_offset_its_release_needs() {
        // Buckets must start at …:57.000000001 (the issue's unaligned instant).
        let want = 57_000_000_001;
        let t = 1_795_511_757_500_000_000;
        let plus = OffsetRule::Plus.offset_for(want, G);
        let minus = OffsetRule::Minus.offset_for(want, G);
        assert_eq!(plus, 57_000_000_001);
        assert_eq!(minus, 2_999_999_999);
        assert_eq!(v126_start(t, plus).rem_euclid(G), want);
        assert_eq!(v151_start(t, minus).rem_euclid(G), want);
        // The same text read by the other release starts buckets elsewhere.
        assert_ne!(v151_start(t, plus).rem_euclid(G), want);
        assert_ne!(v126_start(t, minus).rem_euclid(G), want);
    }

    #[test]
    fn starts_tell_the_rule_apart() {
        let want = 57_000_000_001;
        let t = 1_795_511_757_500_000_000;
        let sent = OffsetRule::Minus.offset_for(want, G);
        let on_v151 = [v151_start(t, sent), v151_start(t + G, sent)];
        let on_v126 = [v126_start(t, sent), v126_start(t + G, sent)];
        assert_eq!(alignment(on_v151, want, sent, G), Alignment::Aligned);
        assert_eq!(alignment(on_v126, want, sent, G), Alignment::Misaligned);
        assert_eq!(alignment([], want, sent, G), Alignment::Silent);
    }

    #[test]
    fn offsets_both_rules_read_alike_teach_nothing() {
        // 0 and g/2: the starts are right whichever rule the server follows.
        for want in [0, G / 2] {
            let sent = OffsetRule::Minus.offset_for(want, G);
            assert_eq!(sent, OffsetRule::Plus.offset_for(want, G));
            assert_eq!(v126_start(7 * G + 5, sent), v151_start(7 * G + 5, sent));
            assert_eq!(
                alignment([v126_start(7 * G + 5, sent)], want, sent, G),
                Alignment::Silent
            );
        }
    }

    #[test]
    fn end_is_exclusive_and_cut_by_a_nanosecond_filter() {
        // 2026-11-25T10:00:00Z is the last nanosecond wanted: v1.26 would read
        // `end=…00` as taking in the whole second that follows.
        let last = 1_795_600_800_000_000_000;
        let (end, filter) = exact_end(last);
        assert_eq!(end, "1795600800000000001");
        assert_eq!(filter, "_time:<2026-11-25T10:00:00.000000001Z");
        assert_eq!(
            exact_end(-1).1,
            "_time:<1970-01-01T00:00:00.000000000Z",
            "before 1970 too"
        );
        assert_eq!(exact_end(i64::MAX).0, i64::MAX.to_string());
    }

    #[test]
    fn learning_reports_a_change_of_rule_only() {
        let d = Dialect::default();
        assert_eq!(d.offset_rule(), None);
        assert!(
            !d.learn_offset_rule(OffsetRule::Plus),
            "first sight is no change"
        );
        assert_eq!(d.clone().offset_rule(), Some(OffsetRule::Plus));
        assert!(!d.learn_offset_rule(OffsetRule::Plus));
        assert!(
            d.learn_offset_rule(OffsetRule::Minus),
            "an upgrade in place"
        );
        d.forget();
        assert_eq!(d.offset_rule(), None);
    }

    #[test]
    fn the_probe_bucket_names_the_rule() {
        // An entry at …:00.000000005: v1.26 buckets it at 4 (≡ 1 mod 3),
        // v1.51 at 5 (≡ 2 mod 3); the answers as each release writes them.
        let t = 1_795_600_800_000_000_005;
        assert_eq!(v126_start_g(t, 1, 3), t - 1);
        assert_eq!(v151_start_g(t, 1, 3), t);
        let v126 = br#"{"_time":"2026-11-25T10:00:00.000000004Z","n":"1"}
"#;
        let v151 = br#"{"_time":"2026-11-25T10:00:00.000000005Z","n":"1"}
"#;
        assert_eq!(rule_of_probe(v126), Some(OffsetRule::Plus));
        assert_eq!(rule_of_probe(v151), Some(OffsetRule::Minus));
        assert_eq!(rule_of_probe(b""), None, "no entry: nothing learnt");
        assert_eq!(
            rule_of_probe(br#"{"_time":"2026-11-25T10:00:00.000000006Z","n":"1"}"#),
            None,
            "a start neither rule gives"
        );
    }
}

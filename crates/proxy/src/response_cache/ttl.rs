//! How long an answer is kept: the one rule, applied to the end of the data
//! the answer depends on.
//!
//! An answer is complete once the newest log it reads is older than
//! `--cache-freshness`; then it is kept for `--cache-ttl`, otherwise for
//! `--cache-live-ttl`. The newest log read is not always the request's
//! `end`: a metric `query_range` is evaluated up to `end` aligned up to the
//! step (as Loki's frontend aligns it), and a negative `offset` reads after
//! each step's time (`rate({a="b"}[5m] offset -1h)` at `end` reads up to
//! `end + 1h`).

use std::time::Duration;

use logql_parser::Expr;

use super::CacheSettings;
use crate::params::timestamp::parse_timestamp;
use crate::params::{self, Form};

/// The TTL of an answer whose data ends at `data_end` ([`cache::Lifetimes`]).
pub(crate) fn ttl_after(data_end: i64, settings: &CacheSettings, now: i64) -> Duration {
    settings.lifetimes().ttl_after(data_end, now)
}

/// The TTL of the answer to `endpoint` with parameters `form`: the live TTL
/// when the data end cannot be told (the handler then answers an error,
/// which is not kept anyway).
pub(super) fn ttl_for(endpoint: &str, form: &Form, settings: &CacheSettings, now: i64) -> Duration {
    data_end(endpoint, form, now).map_or(settings.live_ttl, |end| ttl_after(end, settings, now))
}

/// The end of the data an answer reads, read from the same parameters the
/// handler reads (first values, `r.Form` order).
fn data_end(endpoint: &str, form: &Form, now: i64) -> Option<i64> {
    match endpoint {
        "query_range" => {
            let p = params::range_params(form, now).ok()?;
            match logql_parser::parse_query(&p.query).ok()? {
                Expr::Log(_) => Some(p.bounds.end),
                Expr::Metric(m) => {
                    let end = p.bounds.end;
                    let aligned = end.checked_add((p.step - end.rem_euclid(p.step)) % p.step)?;
                    aligned.checked_add(crate::handler::metric::lookahead(&m))
                }
            }
        }
        "query" => {
            let p = params::instant_params(form, now).ok()?;
            match logql_parser::parse_query(&p.query).ok()? {
                Expr::Log(_) => Some(p.time),
                Expr::Metric(m) => p.time.checked_add(crate::handler::metric::lookahead(&m)),
            }
        }
        // `end` (range endpoints) or `time`; absent means "now", the live edge.
        _ => {
            let end = match form.get("end") {
                "" => form.get("time"),
                v => v,
            };
            if end.is_empty() {
                return None;
            }
            parse_timestamp(end, now).ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const NOW: i64 = 2_000_000_000 * S;

    fn settings() -> CacheSettings {
        CacheSettings {
            ttl: Duration::from_secs(3600),
            live_ttl: Duration::from_secs(5),
            freshness: Duration::from_secs(600),
            ..CacheSettings::default()
        }
    }

    fn ttl(endpoint: &str, pairs: &[(&str, String)]) -> Duration {
        let form = Form::from_pairs(pairs.iter().map(|(k, v)| (*k, v.clone())));
        ttl_for(endpoint, &form, &settings(), NOW)
    }

    #[test]
    fn closed_ranges_get_the_long_ttl_and_the_live_edge_the_short_one() {
        let s = settings();
        let end = |e: i64| vec![("end", e.to_string())];
        // Ended 11 minutes ago: closed.
        assert_eq!(ttl("labels", &end(NOW - 660 * S)), s.ttl);
        // Ended 5 minutes ago: live edge.
        assert_eq!(ttl("labels", &end(NOW - 300 * S)), s.live_ttl);
        // No end: "now", the live edge.
        assert_eq!(ttl("labels", &[]), s.live_ttl);
        // `time`, in any Loki format (here seconds).
        assert_eq!(ttl("patterns", &[("time", "1000000000".to_owned())]), s.ttl);
        // The first `end` is the one the handler reads.
        let two = [
            ("end", (NOW - 60 * S).to_string()),
            ("end", (NOW - 3600 * S).to_string()),
        ];
        assert_eq!(ttl("labels", &two), s.live_ttl);
    }

    #[test]
    fn a_negative_offset_reads_past_the_end() {
        let s = settings();
        let q = |query: &str, end: i64| {
            vec![
                ("query", query.to_owned()),
                ("start", (end - 3600 * S).to_string()),
                ("end", end.to_string()),
                ("step", "60".to_owned()),
            ]
        };
        let end = NOW - 3600 * S;
        assert_eq!(ttl("query_range", &q(r#"rate({a="b"}[5m])"#, end)), s.ttl);
        assert_eq!(
            ttl("query_range", &q(r#"rate({a="b"}[5m] offset 1h)"#, end)),
            s.ttl
        );
        // Reads up to `end + 1h` = now: incomplete.
        assert_eq!(
            ttl("query_range", &q(r#"rate({a="b"}[5m] offset -1h)"#, end)),
            s.live_ttl
        );
        assert_eq!(
            ttl(
                "query_range",
                &q(
                    r#"sum(rate({a="b"}[5m])) / sum(rate({a="b"}[5m] offset -55m))"#,
                    end
                )
            ),
            s.live_ttl
        );
        // Reads up to `end + 45m`, still 15 minutes before now: closed.
        assert_eq!(
            ttl("query_range", &q(r#"rate({a="b"}[5m] offset -45m)"#, end)),
            s.ttl
        );
        // Instant queries: `time` plus the lookahead.
        let t = |query: &str| vec![("query", query.to_owned()), ("time", end.to_string())];
        assert_eq!(ttl("query", &t(r#"count_over_time({a="b"}[5m])"#)), s.ttl);
        assert_eq!(
            ttl("query", &t(r#"count_over_time({a="b"}[5m] offset -1h)"#)),
            s.live_ttl
        );
    }

    #[test]
    fn a_metric_range_reads_up_to_its_end_aligned_to_the_step() {
        let s = settings();
        // Five minutes past an hour; `end` half an hour ago is closed, but
        // the 1-hour step aligns it up to the hour, five minutes ago: live.
        let hour = 3600 * S;
        let now = 555_556 * hour + 300 * S;
        let end = 555_556 * hour - 1800 * S;
        let ttl = |query: &str| {
            let form = Form::from_pairs([
                ("query", query.to_owned()),
                ("start", (end - 86_400 * S).to_string()),
                ("end", end.to_string()),
                ("step", "1h".to_owned()),
            ]);
            ttl_for("query_range", &form, &s, now)
        };
        assert_eq!(ttl(r#"rate({a="b"}[5m])"#), s.live_ttl);
        // A log query is not aligned.
        assert_eq!(ttl(r#"{a="b"}"#), s.ttl);
    }
}

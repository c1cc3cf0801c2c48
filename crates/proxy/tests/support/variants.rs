//! lokivl set-ups the differential suite asks besides the defaults. Each
//! must answer every query like Loki: windows change how an answer is
//! computed, never what it is.

use std::collections::BTreeMap;
use std::time::Duration;

use super::backend::Tap;
use super::differential::{self, Compared, Kind, Query};

/// A named change to lokivl's settings.
pub struct Variant {
    pub name: &'static str,
    pub tune: fn(&mut proxy::config::Settings),
}

/// Windows far shorter than the suite's 12-minute ranges, so every range
/// query is split: first closed windows (evaluated whole and cached), then,
/// with a freshness margin reaching past the dataset, live windows (clipped
/// to the request).
pub fn windowed() -> Vec<Variant> {
    vec![
        Variant {
            name: "windows-5m",
            tune: |s| s.cache.windows.interval = Duration::from_secs(300),
        },
        Variant {
            name: "live-windows-7m",
            tune: |s| {
                s.cache.windows.interval = Duration::from_secs(420);
                s.cache.freshness = Duration::from_secs(30 * 86_400);
            },
        },
    ]
}

/// Every set-up besides the default: the windows, and the response cache
/// off (nothing shared, kept or split).
pub fn all() -> Vec<Variant> {
    let mut out = windowed();
    out.push(Variant {
        name: "cache-off",
        tune: |s| s.cache.max_bytes = 0,
    });
    out
}

/// Asks every variant (each its own lokivl in front of `backend`) every query.
pub async fn ask_all(
    backend: &str,
    queries: &[Query],
    base_ns: i64,
) -> Vec<(&'static str, BTreeMap<String, Compared>)> {
    ask_all_on(backend, queries, base_ns, |_| {}).await
}

/// Like [`ask_all`], each variant's settings tuned by `base` first (the
/// discovery suite's Loki defaults).
pub async fn ask_all_on(
    backend: &str,
    queries: &[Query],
    base_ns: i64,
    base: fn(&mut proxy::config::Settings),
) -> Vec<(&'static str, BTreeMap<String, Compared>)> {
    let mut out = Vec::new();
    for v in all() {
        let lokivl = super::start_lokivl_with(backend, |s| {
            base(s);
            (v.tune)(s);
        })
        .await;
        out.push((
            v.name,
            differential::ask_all(&lokivl, queries, base_ns).await,
        ));
    }
    out
}

/// Unexpected differences from Loki of the variants' answers, each prefixed
/// with its variant. A listed known gap that a variant happens to answer
/// right is not an error here (the default set-up keeps the list honest).
pub fn failures(
    queries: &[Query],
    loki: &BTreeMap<String, Compared>,
    answers: &[(&'static str, BTreeMap<String, Compared>)],
    gaps: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, lokivl) in answers {
        let verdict = differential::judge(queries, loki, lokivl, gaps);
        out.extend(
            verdict
                .failures
                .into_iter()
                .filter(|f| !f.contains("now equals Loki"))
                .map(|f| format!("[{name}] {f}")),
        );
    }
    out
}

/// Metric range queries of the list with an explicit step, at most `n`.
fn refreshable<'a>(
    queries: &'a [Query],
    loki: &BTreeMap<String, Compared>,
    n: usize,
) -> Vec<&'a Query> {
    queries
        .iter()
        .filter(|q| q.kind == Kind::Range && q.params.contains_key("step"))
        .filter(|q| {
            loki.get(&q.id).is_some_and(|a| {
                a.status == 200
                    && a.json
                        .as_ref()
                        .and_then(|j| j.pointer("/data/resultType"))
                        .is_some_and(|t| t == "matrix")
            })
        })
        .take(n)
        .collect()
}

/// A dashboard refresh: each metric range query asked again with `start`
/// and `end` moved one step later. Through a split lokivl whose cache holds
/// the first answer's windows, the refresh must need fewer VictoriaLogs
/// calls than the first answer did, and must equal what an unsplit lokivl
/// answers for the moved range. Returns the failures.
pub async fn refresh_failures(
    tap: &Tap,
    queries: &[Query],
    loki: &BTreeMap<String, Compared>,
    base_ns: i64,
) -> Vec<String> {
    refresh_failures_on(tap, queries, loki, base_ns, |_| {}).await
}

/// Like [`refresh_failures`], both lokivl's settings tuned by `base` first.
pub async fn refresh_failures_on(
    tap: &Tap,
    queries: &[Query],
    loki: &BTreeMap<String, Compared>,
    base_ns: i64,
    base: fn(&mut proxy::config::Settings),
) -> Vec<String> {
    let split = super::start_lokivl_with(&tap.url, |s| {
        base(s);
        (windowed()[0].tune)(s);
    })
    .await;
    let unsplit = super::start_lokivl_with(&tap.url, base).await;
    let mut out = Vec::new();
    let picked = refreshable(queries, loki, 12);
    if picked.is_empty() {
        out.push("no metric range query with a step to refresh".to_owned());
    }
    for q in picked {
        let Some(step) = q
            .params
            .get("step")
            .and_then(|s| differential::parse_offset_ns(s))
        else {
            continue;
        };
        let before = tap.requests();
        let first = differential::ask(&split, q, base_ns).await;
        let first_calls = tap.requests() - before;
        let moved = shifted(q, step);
        let before = tap.requests();
        let refreshed = differential::ask(&split, &moved, base_ns).await;
        let refresh_calls = tap.requests() - before;
        let expected = differential::ask(&unsplit, &moved, base_ns).await;
        if first.status != 200 {
            out.push(format!("{}: first answer {}", q.id, first.status));
        }
        if let Some(d) = differential::compare(&expected, &refreshed) {
            out.push(format!(
                "{}: refreshed answer differs from the unsplit one: {d}",
                q.id
            ));
        }
        if refresh_calls >= first_calls {
            out.push(format!(
                "{}: the refresh made {refresh_calls} VictoriaLogs calls, the first answer {first_calls}: closed windows were not reused",
                q.id
            ));
        }
    }
    out
}

/// `q` with `start` and `end` moved `step` nanoseconds later.
fn shifted(q: &Query, step: i64) -> Query {
    let mut moved = q.clone();
    moved.shift_ns = q.shift_ns + step;
    moved.id = format!("{}+refresh", q.id);
    moved
}

//! Metric series carrying the labels Loki's ingest adds (`service_name`,
//! `detected_level`), which VictoriaLogs does not store.
//!
//! `service_name` is a function of the stream, so a bucketed `stats` request
//! grouped by `_stream` (instead of by `service_name`) is exact: each group is
//! mapped to its derived value here, then groups that agree on the labels the
//! query needs are merged ([`Stats::merge`]: counts and sums add, min/max
//! combine). `detected_level` is a function of each entry (its metadata and
//! line), so a query needing it as a label is counted from rows
//! ([`super::rows`]), which add it per entry.

use std::collections::BTreeMap;

use logql_parser::Grouping;
use logsql_ast::Discovery;

use super::buckets::{BucketSeries, Stats, merge, project};
use super::error::EngineError;
use super::plan::Need;
use super::series::{Labels, normalize};
use crate::discovery::{
    DETECTED_LEVEL, LEVEL_FIELDS, SERVICE_NAME, derive_service_name, level_label, level_of,
};
use crate::labels::{parse_stream, sanitize_label_name};

pub use super::buckets::STREAM_FIELD;

/// Which synthesized labels a range aggregation's series must carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Derived {
    /// `service_name` is a label of the series.
    pub service_name: bool,
    /// `detected_level` is a label of the series.
    pub level: bool,
}

impl Derived {
    /// What `need` asks for under `discovery`: every label (`Need::All`)
    /// includes both synthesized ones, as Loki stores them on every entry.
    pub fn of(need: &Need, discovery: &Discovery) -> Self {
        let wants = |name: &str| match need {
            Need::All => true,
            Need::Only(labels) => labels.iter().any(|l| l == name),
        };
        Derived {
            service_name: discovery.service_name() && wants(SERVICE_NAME),
            level: discovery.log_levels && wants(DETECTED_LEVEL),
        }
    }
}

/// The `stats` grouping fields when `service_name` is derived: the needed
/// fields without `service_name` (VictoriaLogs cannot group on it), plus
/// `_stream`, from which [`with_service_name`] derives it.
pub fn stream_grouping(by: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = by
        .into_iter()
        .filter(|f| f != SERVICE_NAME && f != STREAM_FIELD)
        .collect();
    out.push(STREAM_FIELD.to_owned());
    out
}

/// Removes VictoriaLogs' `_stream` group label and returns its value.
fn take_stream(labels: &mut Labels) -> String {
    labels
        .iter()
        .position(|(n, _)| n == STREAM_FIELD)
        .map(|i| labels.remove(i).1)
        .unwrap_or_default()
}

/// Replaces the `_stream` label of each series (grouped by
/// [`stream_grouping`]) with the `service_name` Loki derives for that
/// stream, applies the range aggregation's own `grouping`, and merges the
/// series that now have the same labels.
///
/// # Errors
/// [`EngineError::Backend`] when VictoriaLogs' `_stream` does not parse.
pub fn with_service_name(
    series: Vec<BucketSeries>,
    discovery: &Discovery,
    grouping: Option<&Grouping>,
) -> Result<Vec<BucketSeries>, EngineError> {
    let mut by_labels: BTreeMap<Labels, Vec<(i64, Stats)>> = BTreeMap::new();
    for s in series {
        let mut labels = s.labels;
        let stream = take_stream(&mut labels);
        let name = service_name_of(&stream, discovery)?;
        labels.retain(|(n, _)| n != SERVICE_NAME);
        let at = labels.partition_point(|(n, _)| n.as_str() < SERVICE_NAME);
        labels.insert(at, (SERVICE_NAME.to_owned(), name));
        by_labels
            .entry(project(labels, grouping))
            .or_default()
            .extend(s.buckets);
    }
    Ok(merge(by_labels))
}

/// The `service_name` of the stream VictoriaLogs prints as `stream`
/// (`{app="api",env="prod"}`): a stored one, else the derived one.
fn service_name_of(stream: &str, discovery: &Discovery) -> Result<String, EngineError> {
    let pairs = parse_stream(stream)
        .map_err(|e| EngineError::Backend(format!("invalid _stream {stream:?}: {e}")))?;
    let labels: Vec<(String, String)> = pairs
        .iter()
        .map(|(n, v)| (sanitize_label_name(n).into_owned(), v.to_string()))
        .collect();
    let get = |n: &str| {
        labels
            .iter()
            .find(|(k, v)| k == n && !v.is_empty())
            .map(|(_, v)| v.as_str())
    };
    if let Some(v) = get(SERVICE_NAME) {
        return Ok(v.to_owned());
    }
    Ok(derive_service_name(
        discovery.service_name_labels.iter().map(String::as_str),
        get,
    )
    .to_owned())
}

/// The fields a row-counted aggregation reads when no stage runs in the
/// proxy and only `labels` are needed: the time, the line (bytes and the
/// line's level), the stream (`service_name` and level labels), the level
/// metadata and the needed labels. Keeps the bounded fetch small.
pub fn row_fields(labels: &[String]) -> Vec<String> {
    let mut out: Vec<String> = ["_time", "_msg", STREAM_FIELD, DETECTED_LEVEL]
        .iter()
        .chain(LEVEL_FIELDS)
        .chain(&["severity_number"])
        .map(|s| (*s).to_owned())
        .collect();
    for l in labels {
        if l != SERVICE_NAME && !out.contains(l) {
            out.push(l.clone());
        }
    }
    out
}

/// The stored fields besides the line that `detected_level` is derived
/// from, by their names in VictoriaLogs: a stored `detected_level`, Loki's
/// level fields (those that are valid label names: the row path reads
/// metadata by Loki name, so a dotted one never matches there either) and
/// OTel's `severity_number`.
pub fn level_fields() -> Vec<&'static str> {
    std::iter::once(DETECTED_LEVEL)
        .chain(
            LEVEL_FIELDS
                .iter()
                .copied()
                .filter(|n| crate::labels::is_valid_label_name(n)),
        )
        .chain(std::iter::once("severity_number"))
        .collect()
}

/// Whether a group of a [`level_grouping`] answer has a level field set
/// (empty group values are dropped when decoding), so its `detected_level`
/// does not depend on the line.
pub fn has_level(labels: &Labels) -> bool {
    let fields = level_fields();
    labels
        .iter()
        .any(|(n, v)| fields.contains(&n.as_str()) && Some(v.as_str()) != otel_filler(n))
}

/// The value VictoriaLogs stores in field `f` for an OTLP record that set no
/// severity (v1.51 `severity_number` `0` and `severity_text`
/// `Unspecified`, v1.26 `severity` `Unspecified`): Loki stores nothing
/// there, so such an entry's level comes from its line (read as a row, where
/// [`crate::discovery::otel::push_metadata`] tells OTLP streams from others).
fn otel_filler(f: &str) -> Option<&'static str> {
    use logsql_ast::otel::{SEVERITY_NUMBER, SEVERITY_TEXT, VL_SEVERITY, VL_SEVERITY_NAMES};
    match f {
        SEVERITY_NUMBER => Some("0"),
        SEVERITY_TEXT | VL_SEVERITY => Some(VL_SEVERITY_NAMES[0]),
        _ => None,
    }
}

/// Entries with a non-empty [`level_fields`] field, whose `detected_level`
/// does not depend on the line; the proxy reads only the others' lines
/// (`!has_level_field()`).
pub fn has_level_field() -> logsql_ast::Filter {
    logsql_ast::Filter::or(level_fields().into_iter().map(|f| {
        let set = logsql_ast::Filter::NonEmpty(f.to_owned());
        match otel_filler(f) {
            Some(value) => logsql_ast::Filter::and([
                set,
                logsql_ast::Filter::not(logsql_ast::Filter::Exact {
                    field: f.to_owned(),
                    value: value.to_owned(),
                }),
            ]),
            None => set,
        }
    }))
}

/// The level fields of Loki's JSON and logfmt lines, by priority: every
/// one of Loki's `log_level_fields` (a dotted one is a JSON key too).
pub fn line_level_keys() -> &'static [&'static str] {
    LEVEL_FIELDS
}

/// The pipes computing the level of the lines of entries without a
/// [`level_fields`] field ([`logsql_ast::line_level::pipes`]), and the
/// grouping that adds it to [`level_grouping`].
pub fn line_level_pipes() -> String {
    logsql_ast::line_level::pipes(
        &logsql_ast::Filter::not(has_level_field()),
        line_level_keys(),
    )
}

/// [`level_grouping`] plus the line's level computed by [`line_level_pipes`].
pub fn line_level_grouping(labels: &[String]) -> Vec<String> {
    let mut out = level_grouping(labels);
    out.insert(out.len() - 1, LINE_LEVEL.to_owned());
    out
}

/// The field [`line_level_pipes`] sets.
pub const LINE_LEVEL: &str = logsql_ast::line_level::LEVEL_FIELD;

/// Whether a group of a [`line_level_grouping`] answer counts entries whose
/// level the pipes left to the proxy (no level field, and the line's level
/// is [`logsql_ast::line_level::RESIDUE`] or missing): their rows are read.
pub fn is_residue(labels: &Labels) -> bool {
    if has_level(labels) {
        return false;
    }
    labels
        .iter()
        .find(|(n, _)| n == LINE_LEVEL)
        .is_none_or(|(_, v)| v == logsql_ast::line_level::RESIDUE)
}

/// The `stats` grouping for [`with_levels`]: the needed labels without the
/// synthesized ones, the level fields and `_stream`.
pub fn level_grouping(labels: &[String]) -> Vec<String> {
    let mut out: Vec<String> = labels
        .iter()
        .filter(|l| *l != SERVICE_NAME && *l != DETECTED_LEVEL)
        .cloned()
        .collect();
    for f in level_fields() {
        if !out.iter().any(|o| o == f) {
            out.push(f.to_owned());
        }
    }
    out.push(STREAM_FIELD.to_owned());
    out
}

/// Maps groups of entries that have a level field (grouped by
/// [`level_grouping`], decoded with [`super::buckets::decode_by_stream`]) to
/// their `detected_level` (and `service_name` when `derived` asks), as
/// Loki's ingest derives them, keeping only the `keep` labels.
///
/// # Errors
/// [`EngineError::Backend`] when VictoriaLogs' `_stream` does not parse.
pub fn with_levels(
    series: Vec<BucketSeries>,
    discovery: &Discovery,
    derived: Derived,
    keep: &[String],
) -> Result<Vec<BucketSeries>, EngineError> {
    let mut by_labels: BTreeMap<Labels, Vec<(i64, Stats)>> = BTreeMap::new();
    for s in series {
        let mut labels = s.labels;
        let stream = take_stream(&mut labels);
        // The line's level, when VictoriaLogs computed it: it is the
        // entries' level only when no level field is set.
        let line_level = labels
            .iter()
            .position(|(n, _)| n == LINE_LEVEL)
            .map(|i| labels.remove(i).1)
            .filter(|_| !has_level(&labels));
        let pairs = parse_stream(&stream)
            .map_err(|e| EngineError::Backend(format!("invalid _stream {stream:?}: {e}")))?;
        let stream_labels: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| (sanitize_label_name(n).into_owned(), v.to_string()))
            .collect();
        let in_stream = |n: &str| stream_labels.iter().any(|(k, _)| k == n);
        let stream_get = |n: &str| {
            stream_labels
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        // The group's metadata as Loki stores it (OTel severity translated).
        let otlp = crate::discovery::otel::is_otlp_stream(pairs.iter().map(|(k, _)| k.as_ref()));
        let mut meta: Vec<(std::borrow::Cow<'_, str>, &str)> = Vec::new();
        crate::discovery::otel::push_metadata(
            otlp,
            labels
                .iter()
                .filter(|(k, _)| !in_stream(k))
                .map(|(k, v)| (k.as_str(), v.as_str())),
            &mut meta,
        );
        let meta_get = |n: &str| meta.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let mut out: Labels = Vec::new();
        if derived.level {
            // A stream label of that name is the entry's, as in the row path.
            let level = match (stream_get(DETECTED_LEVEL), line_level) {
                (Some(v), _) => v.to_owned(),
                (None, Some(line)) => line,
                (None, None) => level_of(level_label(stream_get), &meta_get, "").to_owned(),
            };
            out.push((DETECTED_LEVEL.to_owned(), level));
        }
        if derived.service_name {
            out.push((
                SERVICE_NAME.to_owned(),
                service_name_of(&stream, discovery)?,
            ));
        }
        for (n, v) in labels.iter().chain(stream_labels.iter()) {
            let synthesized = (derived.level && n == DETECTED_LEVEL)
                || (derived.service_name && n == SERVICE_NAME);
            if !synthesized && keep.contains(n) {
                out.push((n.clone(), v.clone()));
            }
        }
        by_labels
            .entry(normalize(out))
            .or_default()
            .extend(s.buckets);
    }
    Ok(merge(by_labels))
}

/// The labels of a series needing every label (`Need::All`): each of
/// `fields` (VictoriaLogs names, as Loki label names) and the synthesized
/// labels `derived` asks for.
pub fn all_labels(fields: &[String], derived: Derived) -> Vec<String> {
    let mut out: Vec<String> = fields
        .iter()
        .map(|f| sanitize_label_name(f).into_owned())
        .collect();
    if derived.level {
        out.push(DETECTED_LEVEL.to_owned());
    }
    if derived.service_name {
        out.push(SERVICE_NAME.to_owned());
    }
    out.sort();
    out.dedup();
    out
}

/// Keeps only the `keep` labels of each series and merges series that then
/// agree, so counts from rows join [`with_levels`]' groups.
pub fn keep_only(series: Vec<BucketSeries>, keep: &[String]) -> Vec<BucketSeries> {
    let mut by_labels: BTreeMap<Labels, Vec<(i64, Stats)>> = BTreeMap::new();
    for s in series {
        let labels: Labels = s
            .labels
            .into_iter()
            .filter(|(n, _)| keep.contains(n))
            .collect();
        by_labels.entry(labels).or_default().extend(s.buckets);
    }
    merge(by_labels)
}

/// Whether a metric grouped by `need` reads OTel severity metadata, which
/// only the per-entry translation gives as Loki stores it.
pub fn groups_by_severity(need: &Need) -> bool {
    match need {
        Need::Only(labels) => labels.iter().any(|l| logsql_ast::otel::is_severity(l)),
        Need::All => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> Discovery {
        Discovery {
            service_name_labels: vec!["service".into(), "app".into()],
            log_levels: true,
        }
    }

    fn l(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn st(count: f64, min: f64) -> Stats {
        Stats {
            count,
            min,
            max: min,
            ..Stats::default()
        }
    }

    #[test]
    fn needs_follow_the_settings() {
        let only = |x: &[&str]| Need::Only(x.iter().map(|s| (*s).to_owned()).collect());
        let d = on();
        assert_eq!(
            Derived::of(&only(&["service_name"]), &d),
            Derived {
                service_name: true,
                level: false
            }
        );
        assert_eq!(
            Derived::of(&only(&["detected_level", "app"]), &d),
            Derived {
                service_name: false,
                level: true
            }
        );
        assert_eq!(Derived::of(&only(&[]), &d), Derived::default());
        assert_eq!(
            Derived::of(&Need::All, &d),
            Derived {
                service_name: true,
                level: true
            }
        );
        assert_eq!(
            Derived::of(&Need::All, &Discovery::default()),
            Derived::default()
        );
    }

    #[test]
    fn grouping_replaces_service_name_by_the_stream() {
        assert_eq!(
            stream_grouping(vec!["service_name".into(), "env".into()]),
            vec!["env".to_owned(), "_stream".to_owned()]
        );
    }

    #[test]
    fn streams_map_to_service_names_and_merge() {
        let series = vec![
            // app=api and service=api both derive `api`: merged.
            BucketSeries {
                labels: l(&[("_stream", r#"{app="api",env="p"}"#)]),
                buckets: vec![(10, st(2.0, 5.0)), (20, st(1.0, 1.0))],
            },
            BucketSeries {
                labels: l(&[("_stream", r#"{service="api"}"#)]),
                buckets: vec![(10, st(3.0, 2.0))],
            },
            // `service` wins over `app`.
            BucketSeries {
                labels: l(&[("_stream", r#"{app="x",service="web"}"#)]),
                buckets: vec![(20, st(4.0, 7.0))],
            },
            // A stored service_name wins; no candidate gives unknown_service.
            BucketSeries {
                labels: l(&[("_stream", r#"{app="x",service_name="db"}"#)]),
                buckets: vec![(10, st(1.0, 1.0))],
            },
            BucketSeries {
                labels: l(&[("_stream", r#"{host="h"}"#)]),
                buckets: vec![(10, st(6.0, 1.0))],
            },
        ];
        let out = with_service_name(series, &on(), None).unwrap();
        type Got = Vec<(Labels, Vec<(i64, f64, f64)>)>;
        let got: Got = out
            .iter()
            .map(|s| {
                (
                    s.labels.clone(),
                    s.buckets
                        .iter()
                        .map(|b| (b.0, b.1.count, b.1.min))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    l(&[("service_name", "api")]),
                    vec![(10, 5.0, 2.0), (20, 1.0, 1.0)]
                ),
                (l(&[("service_name", "db")]), vec![(10, 1.0, 1.0)]),
                (
                    l(&[("service_name", "unknown_service")]),
                    vec![(10, 6.0, 1.0)]
                ),
                (l(&[("service_name", "web")]), vec![(20, 4.0, 7.0)]),
            ]
        );
    }

    #[test]
    fn other_labels_are_kept_and_range_grouping_applies() {
        let series = vec![
            BucketSeries {
                labels: l(&[("_stream", r#"{app="a",env="p"}"#), ("env", "p")]),
                buckets: vec![(10, st(1.0, 0.0))],
            },
            BucketSeries {
                labels: l(&[("_stream", r#"{app="a",env="q"}"#), ("env", "q")]),
                buckets: vec![(10, st(2.0, 0.0))],
            },
        ];
        let out = with_service_name(series.clone(), &on(), None).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].labels, l(&[("env", "p"), ("service_name", "a")]));
        let g = Grouping {
            without: false,
            labels: vec!["service_name".into()],
        };
        let out = with_service_name(series, &on(), Some(&g)).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].labels, l(&[("service_name", "a")]));
        assert_eq!(out[0].buckets, vec![(10, st(3.0, 0.0))]);
    }

    #[test]
    fn bad_stream_is_a_backend_error() {
        let series = vec![BucketSeries {
            labels: l(&[("_stream", "{app=")]),
            buckets: Vec::new(),
        }];
        assert!(matches!(
            with_service_name(series, &on(), None),
            Err(EngineError::Backend(_))
        ));
    }

    #[test]
    fn level_groups_map_to_detected_level() {
        let series = vec![
            // A metadata level field, normalized.
            BucketSeries {
                labels: l(&[("_stream", r#"{app="a"}"#), ("level", "ERR")]),
                buckets: vec![(10, st(2.0, 0.0))],
            },
            // A stream level label wins over metadata `level`… but a stored
            // detected_level metadata wins over both.
            BucketSeries {
                labels: l(&[
                    ("_stream", r#"{app="a",lvl="warning"}"#),
                    ("lvl", "warning"),
                ]),
                buckets: vec![(10, st(1.0, 0.0))],
            },
            BucketSeries {
                labels: l(&[
                    ("_stream", r#"{app="b",lvl="warning"}"#),
                    ("detected_level", "Error"),
                    ("lvl", "warning"),
                ]),
                buckets: vec![(20, st(4.0, 0.0))],
            },
            // OTel severity.
            BucketSeries {
                labels: l(&[("_stream", r#"{app="b"}"#), ("severity_number", "10")]),
                buckets: vec![(10, st(3.0, 0.0))],
            },
        ];
        let derived = Derived {
            service_name: true,
            level: true,
        };
        let keep = vec!["detected_level".to_owned(), "service_name".to_owned()];
        let out = with_levels(series, &on(), derived, &keep).unwrap();
        let got: Vec<(Labels, Vec<(i64, f64)>)> = out
            .iter()
            .map(|s| {
                (
                    s.labels.clone(),
                    s.buckets.iter().map(|b| (b.0, b.1.count)).collect(),
                )
            })
            .collect();
        let ls = |lvl: &str, svc: &str| l(&[("detected_level", lvl), ("service_name", svc)]);
        assert_eq!(
            got,
            vec![
                (ls("error", "a"), vec![(10, 2.0)]),
                (ls("error", "b"), vec![(20, 4.0)]),
                (ls("info", "b"), vec![(10, 3.0)]),
                (ls("warn", "a"), vec![(10, 1.0)]),
            ]
        );
        // Only the level asked for: services merge, other fields dropped.
        let series = vec![
            BucketSeries {
                labels: l(&[("_stream", r#"{app="a"}"#), ("level", "info")]),
                buckets: vec![(10, st(2.0, 0.0))],
            },
            BucketSeries {
                labels: l(&[("_stream", r#"{app="b"}"#), ("level", "INFO")]),
                buckets: vec![(10, st(3.0, 0.0))],
            },
        ];
        let keep = vec!["detected_level".to_owned()];
        let derived = Derived {
            service_name: false,
            level: true,
        };
        let out = with_levels(series, &on(), derived, &keep).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].labels, l(&[("detected_level", "info")]));
        assert_eq!(out[0].buckets, vec![(10, st(5.0, 0.0))]);
    }

    /// Groups without a level field take the level VictoriaLogs computed
    /// from the line; a level field wins over it; the residue and groups
    /// without a computed level are left to the rows.
    #[test]
    fn line_levels_map_groups_without_level_fields() {
        let ll = LINE_LEVEL;
        let stream = ("_stream", r#"{app="a"}"#);
        assert!(!is_residue(&l(&[stream, (ll, "warn")])));
        assert!(is_residue(&l(&[stream, (ll, "residue")])));
        assert!(is_residue(&l(&[stream])));
        assert!(!is_residue(&l(&[
            stream,
            ("level", "info"),
            (ll, "residue")
        ])));
        let series = vec![
            BucketSeries {
                labels: l(&[stream, (ll, "warn")]),
                buckets: vec![(10, st(2.0, 0.0))],
            },
            BucketSeries {
                labels: l(&[stream, ("level", "ERR"), (ll, "info")]),
                buckets: vec![(10, st(3.0, 0.0))],
            },
            BucketSeries {
                labels: l(&[stream, (ll, "unknown")]),
                buckets: vec![(10, st(1.0, 0.0))],
            },
        ];
        let derived = Derived {
            service_name: false,
            level: true,
        };
        let keep = vec!["detected_level".to_owned()];
        let out = with_levels(series, &on(), derived, &keep).unwrap();
        let got: Vec<(Labels, f64)> = out
            .iter()
            .map(|s| (s.labels.clone(), s.buckets[0].1.count))
            .collect();
        let lv = |v: &str| l(&[("detected_level", v)]);
        assert_eq!(
            got,
            vec![(lv("error"), 3.0), (lv("unknown"), 1.0), (lv("warn"), 2.0)]
        );
        let by = line_level_grouping(&["detected_level".into(), "env".into()]);
        assert_eq!(by.first().map(String::as_str), Some("env"));
        assert_eq!(&by[by.len() - 2..], &[ll.to_owned(), "_stream".to_owned()]);
    }

    #[test]
    fn level_fields_are_label_names() {
        let f = level_fields();
        assert_eq!(f[0], "detected_level");
        assert!(f.contains(&"level") && f.contains(&"severity_number"));
        assert!(!f.contains(&"log.level"));
        assert_eq!(
            level_grouping(&["detected_level".into(), "env".into()]).first(),
            Some(&"env".to_owned())
        );
        assert_eq!(
            level_grouping(&[]).last().map(String::as_str),
            Some("_stream")
        );
    }

    #[test]
    fn groups_with_a_level_field() {
        let stream = ("_stream", r#"{app="api"}"#);
        assert!(has_level(&l(&[stream, ("level", "ERR")])));
        assert!(has_level(&l(&[("severity_number", "17"), stream])));
        assert!(has_level(&l(&[("detected_level", "info")])));
        // Other labels, a dotted level name (never a label) or nothing: the line decides.
        assert!(!has_level(&l(&[stream, ("env", "prod")])));
        assert!(!has_level(&l(&[("log.level", "warn")])));
        assert!(!has_level(&l(&[])));
    }

    #[test]
    fn row_fields_keep_levels_and_needed_labels() {
        let f = row_fields(&["detected_level".into(), "service_name".into(), "env".into()]);
        assert_eq!(&f[..4], &["_time", "_msg", "_stream", "detected_level"]);
        assert!(f.contains(&"level".to_owned()) && f.contains(&"severity_number".to_owned()));
        assert_eq!(f.last().map(String::as_str), Some("env"));
        assert!(!f.contains(&"service_name".to_owned()));
    }
}

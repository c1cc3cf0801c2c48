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
use super::series::Labels;
use crate::drilldown::discovery::{
    DETECTED_LEVEL, LEVEL_FIELDS, SERVICE_NAME, derive_service_name,
};
use crate::labels::{parse_stream, sanitize_label_name};

/// VictoriaLogs' stream field: the grouping that makes `service_name` exact.
pub const STREAM_FIELD: &str = "_stream";

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
        let stream = labels
            .iter()
            .position(|(n, _)| n == STREAM_FIELD)
            .map(|i| labels.remove(i).1)
            .unwrap_or_default();
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
        let got: Vec<(Labels, Vec<(i64, f64, f64)>)> = out
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
    fn row_fields_keep_levels_and_needed_labels() {
        let f = row_fields(&["detected_level".into(), "service_name".into(), "env".into()]);
        assert_eq!(&f[..4], &["_time", "_msg", "_stream", "detected_level"]);
        assert!(f.contains(&"level".to_owned()) && f.contains(&"severity_number".to_owned()));
        assert_eq!(f.last().map(String::as_str), Some("env"));
        assert!(!f.contains(&"service_name".to_owned()));
    }
}

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
use std::collections::HashMap;
use std::collections::hash_map::Entry;

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
    Ok(service_name_in(&loki_stream_labels(stream)?, discovery))
}

/// A VictoriaLogs `_stream` as its labels by Loki name, in stored order.
fn loki_stream_labels(stream: &str) -> Result<Vec<(String, String)>, EngineError> {
    Ok(loki_labels(&parsed_stream(stream)?))
}

fn parsed_stream(stream: &str) -> Result<Vec<crate::labels::LabelPair<'_>>, EngineError> {
    parse_stream(stream)
        .map_err(|e| EngineError::Backend(format!("invalid _stream {stream:?}: {e}")))
}

/// Parsed stream labels by Loki name, in stored order.
fn loki_labels(pairs: &[crate::labels::LabelPair<'_>]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (sanitize_label_name(n).into_owned(), v.to_string()))
        .collect()
}

/// The `service_name` of a stream with `labels` ([`loki_stream_labels`]).
fn service_name_in(labels: &[(String, String)], discovery: &Discovery) -> String {
    let get = |n: &str| {
        labels
            .iter()
            .find(|(k, v)| k == n && !v.is_empty())
            .map(|(_, v)| v.as_str())
    };
    if let Some(v) = get(SERVICE_NAME) {
        return v.to_owned();
    }
    derive_service_name(
        discovery.service_name_labels.iter().map(String::as_str),
        get,
    )
    .to_owned()
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
/// OTel's `severity_number`. Built once: every group of a level answer asks.
pub fn level_fields() -> &'static [&'static str] {
    static FIELDS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        std::iter::once(DETECTED_LEVEL)
            .chain(
                LEVEL_FIELDS
                    .iter()
                    .copied()
                    .filter(|n| crate::labels::is_valid_label_name(n)),
            )
            .chain(std::iter::once("severity_number"))
            .collect()
    });
    &FIELDS
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
    logsql_ast::Filter::or(level_fields().iter().map(|&f| {
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
    for &f in level_fields() {
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
    // Groups repeat streams (one group per stream and level-field values):
    // each stream is parsed once.
    let mut streams: HashMap<String, GroupStream> = HashMap::new();
    let mut keep_sorted: Vec<&str> = keep.iter().map(String::as_str).collect();
    keep_sorted.sort_unstable();
    let kept = |n: &str| keep_sorted.binary_search(&n).is_ok();
    for s in series {
        let mut labels = s.labels;
        let stream = match streams.entry(take_stream(&mut labels)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let parsed = GroupStream::parse(e.key(), discovery, derived.service_name)?;
                e.insert(parsed)
            }
        };
        // The line's level, when VictoriaLogs computed it: it is the
        // entries' level only when no level field is set.
        let line_level = labels
            .iter()
            .position(|(n, _)| n == LINE_LEVEL)
            .map(|i| labels.remove(i).1)
            .filter(|_| !has_level(&labels));
        let stream_labels = &stream.labels;
        let in_stream = |n: &str| stream_labels.iter().any(|(k, _)| k == n);
        let stream_get = |n: &str| {
            stream_labels
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        let mut out: Labels = Vec::with_capacity(keep.len() + 2);
        if derived.level {
            // A stream label of that name is the entry's, as in the row path.
            let level = match (stream_get(DETECTED_LEVEL), line_level) {
                (Some(v), _) => v.to_owned(),
                (None, Some(line)) => line,
                (None, None) => {
                    // The group's metadata as Loki stores it (OTel severity translated).
                    let mut meta: Vec<(std::borrow::Cow<'_, str>, &str)> = Vec::new();
                    crate::discovery::otel::push_metadata(
                        stream.otlp,
                        labels
                            .iter()
                            .filter(|(k, _)| !in_stream(k))
                            .map(|(k, v)| (k.as_str(), v.as_str())),
                        &mut meta,
                    );
                    let meta_get = |n: &str| meta.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
                    level_of(level_label(stream_get), &meta_get, "").to_owned()
                }
            };
            out.push((DETECTED_LEVEL.to_owned(), level));
        }
        if let Some(name) = &stream.service_name {
            out.push((SERVICE_NAME.to_owned(), name.clone()));
        }
        for (n, v) in labels.iter().chain(stream_labels.iter()) {
            let synthesized = (derived.level && n == DETECTED_LEVEL)
                || (derived.service_name && n == SERVICE_NAME);
            if !synthesized && kept(n) {
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

/// What [`with_levels`] reads from a group's `_stream`.
struct GroupStream {
    /// Its labels by Loki name ([`loki_stream_labels`]).
    labels: Vec<(String, String)>,
    /// Whether it came from OTLP (its severity metadata is translated).
    otlp: bool,
    /// Its `service_name`, when the series carry one.
    service_name: Option<String>,
}

impl GroupStream {
    fn parse(stream: &str, discovery: &Discovery, service_name: bool) -> Result<Self, EngineError> {
        let pairs = parsed_stream(stream)?;
        let otlp = crate::discovery::otel::is_otlp_stream(pairs.iter().map(|(k, _)| k.as_ref()));
        let labels = loki_labels(&pairs);
        let service_name = service_name.then(|| service_name_in(&labels, discovery));
        Ok(Self {
            labels,
            otlp,
            service_name,
        })
    }
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
mod tests;

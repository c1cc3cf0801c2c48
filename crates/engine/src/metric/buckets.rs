//! Per-bucket statistics from VictoriaLogs, keyed by Loki label sets.

use std::collections::BTreeMap;

use logql_parser::Grouping;
use logsql_ast::StatsFunc;

use super::error::EngineError;
use super::series::{Labels, normalize};
use crate::labels::sanitize_label_name;
use crate::ndjson::{Decoder, Rows, Source};

/// VictoriaLogs' stream field: the grouping that makes `service_name` exact.
pub const STREAM_FIELD: &str = "_stream";

/// The statistics of one bucket (or of merged buckets).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Entries (or valid samples).
    pub count: f64,
    /// Bytes of the lines.
    pub bytes: f64,
    /// Sum of the unwrapped numbers.
    pub sum: f64,
    /// Smallest number.
    pub min: f64,
    /// Largest number.
    pub max: f64,
    /// Sum of squares.
    pub sumsq: f64,
    /// Values Loki fails to convert.
    pub errors: f64,
    /// Rows on which a parser run in VictoriaLogs may differ from Loki's
    /// (`StatsFunc::Suspect`): any makes the counts unusable.
    pub suspect: f64,
}

impl Default for Stats {
    fn default() -> Self {
        Self {
            count: 0.0,
            bytes: 0.0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sumsq: 0.0,
            errors: 0.0,
            suspect: 0.0,
        }
    }
}

impl Stats {
    /// Adds `o` into `self`: counts and sums add, min/max combine.
    pub fn merge(&mut self, o: &Stats) {
        self.count += o.count;
        self.bytes += o.bytes;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sumsq += o.sumsq;
        self.errors += o.errors;
        self.suspect += o.suspect;
    }
}

/// One series' buckets: `(end, stats)` ascending by end, where a bucket
/// covers `(end − bucket, end]` in nanoseconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BucketSeries {
    /// Loki's labels of the series.
    pub labels: Labels,
    /// Buckets ascending by their (inclusive) end.
    pub buckets: Vec<(i64, Stats)>,
}

/// Turns VictoriaLogs fields into Loki labels: names sanitized, empty values dropped.
pub fn labels_of<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Labels {
    normalize(
        fields
            .into_iter()
            // Scratch fields are dropped, but for the line's level a level
            // grouping asks for (`discovered::line_level_grouping`).
            .filter(|(n, _)| {
                !n.starts_with("__lokivl_") || *n == logsql_ast::line_level::LEVEL_FIELD
            })
            .map(|(n, v)| (sanitize_label_name(n).into_owned(), v.to_owned()))
            .collect(),
    )
}

/// Applies a range aggregation's own `by`/`without` to `labels`.
pub fn project(labels: Labels, grouping: Option<&Grouping>) -> Labels {
    match grouping {
        None => labels,
        Some(g) => labels
            .into_iter()
            .filter(|(n, _)| g.labels.contains(n) != g.without)
            .collect(),
    }
}

/// Decodes a VictoriaLogs `stats by (_time:…)` answer.
///
/// `_time` is each bucket's start `b`; the bucket covers `[b, b + bucket)`,
/// which the lowering aligned to Loki's `(a − bucket, a]` with `a = b + bucket − 1`.
///
/// # Errors
/// [`EngineError::Backend`] for malformed NDJSON or numbers.
pub fn decode(
    body: &mut (impl Source + ?Sized),
    bucket_ns: i64,
    grouping: Option<&Grouping>,
) -> Result<Vec<BucketSeries>, EngineError> {
    decode_rows(body, bucket_ns, grouping, false)
}

/// Decodes a `stats by (_time:…, …, _stream)` answer as [`decode`] does,
/// keeping each row's stream as a `_stream` label (the NDJSON decoder
/// reads `_stream` apart from the other fields) for
/// `discovered::with_service_name`.
///
/// # Errors
/// As [`decode`].
pub fn decode_by_stream(
    body: &mut (impl Source + ?Sized),
    bucket_ns: i64,
) -> Result<Vec<BucketSeries>, EngineError> {
    decode_rows(body, bucket_ns, None, true)
}

fn decode_rows(
    body: &mut (impl Source + ?Sized),
    bucket_ns: i64,
    grouping: Option<&Grouping>,
    keep_stream: bool,
) -> Result<Vec<BucketSeries>, EngineError> {
    let mut rows = Rows::new();
    Decoder::new()
        .decode(body, &mut rows)
        .map_err(|e| EngineError::Backend(e.to_string()))?;
    // Ordered by labels: vector aggregations then add series in a fixed order,
    // so float sums do not change from run to run.
    let mut by_labels: BTreeMap<Labels, Vec<(i64, Stats)>> = BTreeMap::new();
    for row in &rows.rows {
        let fields = rows.fields_of(row);
        let mut st = Stats::default();
        for &(name, value) in fields {
            let slot = match name {
                n if n == StatsFunc::Count.name() => &mut st.count,
                n if n == StatsFunc::Bytes.name() => &mut st.bytes,
                n if n == StatsFunc::Sum.name() => &mut st.sum,
                n if n == StatsFunc::Min.name() => &mut st.min,
                n if n == StatsFunc::Max.name() => &mut st.max,
                n if n == StatsFunc::SumSquares.name() => &mut st.sumsq,
                n if n == StatsFunc::Errors.name() => &mut st.errors,
                n if n == StatsFunc::Suspect.name() => &mut st.suspect,
                _ => continue,
            };
            *slot = parse_number(value)?;
        }
        let stream = keep_stream.then_some((STREAM_FIELD, row.stream));
        let labels = project(labels_of(fields.iter().copied().chain(stream)), grouping);
        by_labels
            .entry(labels)
            .or_default()
            .push((row.time_ns + bucket_ns - 1, st));
    }
    Ok(merge(by_labels))
}

/// Whether any bucket counted a suspect row: a parser run in VictoriaLogs
/// may have answered otherwise than Loki, so the range is evaluated in the
/// proxy instead.
pub fn any_suspect(series: &[BucketSeries]) -> bool {
    series
        .iter()
        .any(|s| s.buckets.iter().any(|(_, st)| st.suspect > 0.0))
}

/// Merges buckets per label set: buckets with the same end combine
/// ([`Stats::merge`]), series come out ordered by labels.
pub fn merge(by_labels: BTreeMap<Labels, Vec<(i64, Stats)>>) -> Vec<BucketSeries> {
    by_labels
        .into_iter()
        .map(|(labels, mut buckets)| {
            buckets.sort_by_key(|b| b.0);
            let mut merged: Vec<(i64, Stats)> = Vec::with_capacity(buckets.len());
            for (t, s) in buckets {
                match merged.last_mut() {
                    Some((lt, ls)) if *lt == t => ls.merge(&s),
                    _ => merged.push((t, s)),
                }
            }
            BucketSeries {
                labels,
                buckets: merged,
            }
        })
        .collect()
}

/// Parses a number as VictoriaLogs prints it (`12`, `1.5e+06`, `NaN`, `Inf`, `-Inf`).
pub fn parse_number(s: &str) -> Result<f64, EngineError> {
    match s {
        "" => Ok(f64::NAN),
        "Inf" | "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        _ => s
            .parse()
            .map_err(|_| EngineError::Backend(format!("not a number: {s:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn rows_become_bucket_series() {
        let mut body = br#"{"_time":"1970-01-01T00:01:40.000000001Z","app":"b","k8s.pod":"p","__lokivl_c":"2"}
{"_time":"1970-01-01T00:00:40.000000001Z","app":"b","k8s.pod":"p","__lokivl_c":"3"}
{"_time":"1970-01-01T00:00:40.000000001Z","app":"a","k8s.pod":"","__lokivl_c":"1","__lokivl_s":"2.5"}
"#
        .to_vec();
        let mut out = decode(&mut body, 60 * S, None).unwrap();
        out.sort_by(|a, b| a.labels.cmp(&b.labels));
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].labels, vec![("app".to_owned(), "a".to_owned())]);
        assert_eq!(out[0].buckets[0].0, 100 * S);
        assert_eq!(out[0].buckets[0].1.sum, 2.5);
        assert_eq!(
            out[1].labels,
            vec![
                ("app".to_owned(), "b".to_owned()),
                ("k8s_pod".to_owned(), "p".to_owned())
            ]
        );
        let ends: Vec<i64> = out[1].buckets.iter().map(|b| b.0).collect();
        assert_eq!(ends, vec![100 * S, 160 * S]);
        assert_eq!(out[1].buckets[0].1.count, 3.0);
    }

    #[test]
    fn grouping_merges_buckets() {
        let mut body = br#"{"_time":"1970-01-01T00:00:00Z","a":"1","b":"x","__lokivl_c":"2","__lokivl_min":"4"}
{"_time":"1970-01-01T00:00:00Z","a":"1","b":"y","__lokivl_c":"3","__lokivl_min":"1.5"}
"#
        .to_vec();
        let g = Grouping {
            without: true,
            labels: vec!["b".into()],
        };
        let out = decode(&mut body, S, Some(&g)).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].buckets.len(), 1);
        assert_eq!(out[0].buckets[0].1.count, 5.0);
        assert_eq!(out[0].buckets[0].1.min, 1.5);
        assert_eq!(out[0].buckets[0].0, S - 1);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("1.5e+06").unwrap(), 1.5e6);
        assert!(parse_number("NaN").unwrap().is_nan());
        assert_eq!(parse_number("-Inf").unwrap(), f64::NEG_INFINITY);
        assert!(parse_number("x").is_err());
    }
}

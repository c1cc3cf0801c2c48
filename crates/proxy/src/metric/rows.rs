//! Range aggregations over pipelines the proxy evaluates (parsers, numeric
//! label filters, `line_format`…): VictoriaLogs selects the entries, the
//! proxy runs the stages ([`crate::pipeline::Pipeline`]) and extracts one
//! sample per kept entry with Loki's rules, then the usual windows apply.
//!
//! Each sample becomes a bucket that ends at its own timestamp, so
//! [`crate::metric::window`] computes exact `(t − range, t]` windows.

use std::collections::BTreeMap;

use logql_parser::{Grouping, LabelFilter, RangeOp, Stage, UnwrapConversion};

use super::buckets::{BucketSeries, Stats, project};
use super::error::EngineError;
use super::raw::RawSeries;
use super::series::{Labels, normalize};
use crate::labels::{parse_stream, sanitize_label_name};
use crate::ndjson::{Decoder, Rows};
use crate::pipeline::Pipeline;
use crate::pipeline::label_filter::{parse_bytes, parse_float};
use crate::pipeline::labels::{ERROR, ERROR_DETAILS};

/// What to extract from each entry.
#[derive(Debug, Clone)]
pub struct Extract<'a> {
    /// The range function.
    pub op: RangeOp,
    /// `unwrap` label and conversion.
    pub unwrap: Option<(&'a str, UnwrapConversion)>,
    /// The range aggregation's own `by`/`without`.
    pub grouping: Option<&'a Grouping>,
}

/// Samples per series, as buckets (bucketable functions) or raw values.
#[derive(Debug, Default)]
pub struct Samples {
    /// One bucket per distinct timestamp of each series.
    pub buckets: Vec<BucketSeries>,
    /// Raw samples (quantile, first, last, rate_counter).
    pub raw: Vec<RawSeries>,
}

/// Go's `time.ParseDuration` in seconds (`Duration.Seconds()`).
fn parse_duration(v: &str) -> Result<f64, String> {
    logql_parser::Duration::parse_go(v)
        .map(|d| d.as_secs_f64())
        .map_err(|e| format!("time: invalid duration {e}"))
}

fn convert(v: &str, conv: UnwrapConversion) -> Result<f64, String> {
    match conv {
        UnwrapConversion::Plain => parse_float(v),
        UnwrapConversion::Duration | UnwrapConversion::DurationSeconds => parse_duration(v),
        UnwrapConversion::Bytes => parse_bytes(v).map(|b| b as f64),
    }
}

/// Runs `stages` (then `post` filters after unwrap) over the NDJSON rows and extracts samples.
///
/// # Errors
/// [`EngineError::Pipeline`] when a kept sample carries an error label (as
/// Loki fails), [`EngineError::Unsupported`] for a pipeline that does not
/// build, [`EngineError::Backend`] for malformed NDJSON.
pub fn extract(
    body: &mut [u8],
    stages: &[Stage],
    post: &[LabelFilter],
    ex: &Extract<'_>,
) -> Result<Samples, EngineError> {
    let mut pipeline =
        Pipeline::new(stages).map_err(|e| EngineError::Unsupported(e.to_string()))?;
    // `__error__` filters after unwrap read the conversion error, which the
    // proxy sets itself; the other post filters run as a pipeline.
    let (err_filters, other): (Vec<&LabelFilter>, Vec<&LabelFilter>) = post
        .iter()
        .partition(|f| matches!(f, LabelFilter::Matcher(m) if m.name == ERROR));
    let post_stages: Vec<Stage> = other.into_iter().cloned().map(Stage::LabelFilter).collect();
    let mut post_pipeline =
        Pipeline::new(&post_stages).map_err(|e| EngineError::Unsupported(e.to_string()))?;
    let mut rows = Rows::new();
    Decoder::new()
        .decode(body, &mut rows)
        .map_err(|e| EngineError::Backend(e.to_string()))?;
    let raw_fn = matches!(
        ex.op,
        RangeOp::QuantileOverTime
            | RangeOp::FirstOverTime
            | RangeOp::LastOverTime
            | RangeOp::RateCounter
    );
    // Ordered by labels, so later float sums are the same on every run.
    let mut series: BTreeMap<Labels, Vec<(i64, f64, f64)>> = BTreeMap::new();
    for row in &rows.rows {
        let stream = parse_stream(row.stream).map_err(|e| EngineError::Backend(e.to_string()))?;
        let stream_names: Vec<String> = stream
            .iter()
            .map(|(n, _)| sanitize_label_name(n).into_owned())
            .collect();
        let stream_iter = stream_names
            .iter()
            .zip(stream.iter())
            .map(|(n, (_, v))| (n.as_str(), v.as_ref()));
        let fields = rows.fields_of(row);
        let meta_names: Vec<String> = fields
            .iter()
            .map(|(n, _)| sanitize_label_name(n).into_owned())
            .collect();
        let meta_iter = meta_names
            .iter()
            .zip(fields.iter())
            .filter(|(n, _)| !stream_names.contains(n))
            .map(|(n, (_, v))| (n.as_str(), *v));
        if !pipeline.process(row.time_ns, row.msg, stream_iter, meta_iter) {
            continue;
        }
        let mut labels: Labels = Vec::new();
        pipeline
            .labels()
            .for_each(|n, v, _| labels.push((n.to_owned(), v.to_owned())));
        let err = pipeline.labels().err();
        if !err.is_empty() {
            labels.push((ERROR.to_owned(), err.to_owned()));
            let d = pipeline.labels().err_details();
            if !d.is_empty() {
                labels.push((ERROR_DETAILS.to_owned(), d.to_owned()));
            }
        }
        let bytes = pipeline.line().len() as f64;
        let mut value = 1.0;
        if let Some((label, conv)) = ex.unwrap {
            let text = labels
                .iter()
                .find(|(n, _)| n == label)
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            if text.is_empty() {
                continue;
            }
            labels.retain(|(n, _)| n != label);
            match convert(&text, conv) {
                Ok(v) => value = v,
                Err(details) => {
                    if !labels.iter().any(|(n, _)| n == ERROR) {
                        labels.push((ERROR.to_owned(), "SampleExtractionErr".to_owned()));
                        labels.push((ERROR_DETAILS.to_owned(), details));
                    }
                    value = 0.0;
                }
            }
            let err_now = labels
                .iter()
                .find(|(n, _)| n == ERROR)
                .map_or(String::new(), |(_, v)| v.clone());
            if !err_filters.iter().all(|f| error_matches(f, &err_now)) {
                continue;
            }
            if !post_stages.is_empty() {
                let kept = post_pipeline.process(
                    row.time_ns,
                    pipeline.line(),
                    labels.iter().map(|(n, v)| (n.as_str(), v.as_str())),
                    std::iter::empty(),
                );
                if !kept {
                    continue;
                }
                labels.clear();
                post_pipeline
                    .labels()
                    .for_each(|n, v, _| labels.push((n.to_owned(), v.to_owned())));
                let err = post_pipeline.labels().err();
                if !err.is_empty() && !labels.iter().any(|(n, _)| n == ERROR) {
                    labels.push((ERROR.to_owned(), err.to_owned()));
                }
            }
        }
        let labels = normalize(labels);
        if let Some((_, e)) = labels.iter().find(|(n, _)| n == ERROR) {
            let mut text = Vec::new();
            crate::labels::write_label_string(
                &mut text,
                labels.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            );
            return Err(EngineError::Pipeline(
                e.clone(),
                String::from_utf8_lossy(&text).into_owned(),
            ));
        }
        let labels = project(labels, ex.grouping);
        series
            .entry(labels)
            .or_default()
            .push((row.time_ns, value, bytes));
    }
    let mut out = Samples::default();
    for (labels, mut s) in series {
        s.sort_by_key(|x| x.0);
        if raw_fn {
            out.raw.push(RawSeries {
                labels,
                samples: s.iter().map(|x| (x.0, x.1)).collect(),
            });
            continue;
        }
        let mut buckets: Vec<(i64, Stats)> = Vec::with_capacity(s.len());
        for (t, v, b) in s {
            let st = Stats {
                count: 1.0,
                bytes: b,
                sum: v,
                min: v,
                max: v,
                sumsq: v * v,
                errors: 0.0,
            };
            match buckets.last_mut() {
                Some((lt, ls)) if *lt == t => ls.merge(&st),
                _ => buckets.push((t, st)),
            }
        }
        out.buckets.push(BucketSeries { labels, buckets });
    }
    Ok(out)
}

/// Whether an `__error__` matcher holds for the error value `err` (`""` when none).
fn error_matches(f: &LabelFilter, err: &str) -> bool {
    let LabelFilter::Matcher(m) = f else {
        return true;
    };
    let re = || {
        regex::Regex::new(&format!("^(?:{})$", m.value))
            .map(|re| re.is_match(err))
            .unwrap_or(false)
    };
    match m.op {
        logql_parser::MatchOp::Eq => m.value == err,
        logql_parser::MatchOp::Neq => m.value != err,
        logql_parser::MatchOp::Re => re(),
        logql_parser::MatchOp::Nre => !re(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages(q: &str) -> (Vec<Stage>, Vec<LabelFilter>, logql_parser::RangeAggregation) {
        let logql_parser::Expr::Metric(logql_parser::MetricExpr::RangeAggregation(r)) =
            logql_parser::parse(q).unwrap()
        else {
            panic!()
        };
        let post = r
            .range
            .unwrap
            .as_ref()
            .map(|u| u.post_filters.clone())
            .unwrap_or_default();
        (r.range.log.pipeline.clone(), post, r)
    }

    const BODY: &str = concat!(
        r#"{"_time":"1970-01-01T00:00:01Z","_stream":"{app=\"a\"}","_msg":"{\"took\":\"1.5s\",\"lvl\":\"x\"}","app":"a"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:00:02Z","_stream":"{app=\"a\"}","_msg":"{\"took\":\"250ms\",\"lvl\":\"x\"}","app":"a"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:00:03Z","_stream":"{app=\"a\"}","_msg":"{\"took\":\"bad\",\"lvl\":\"y\"}","app":"a"}"#,
        "\n"
    );

    #[test]
    fn json_unwrap_duration_with_error_filter() {
        let (st, post, r) = stages(
            r#"sum_over_time({app="a"} | json | unwrap duration(took) | __error__="" [1m])"#,
        );
        let u = r.range.unwrap.as_ref().unwrap();
        let ex = Extract {
            op: r.op,
            unwrap: Some((u.label.as_str(), u.conversion)),
            grouping: None,
        };
        let mut body = BODY.as_bytes().to_vec();
        let s = extract(&mut body, &st, &post, &ex).unwrap();
        assert_eq!(s.buckets.len(), 1);
        assert_eq!(
            s.buckets[0].labels,
            vec![
                ("app".to_owned(), "a".to_owned()),
                ("lvl".to_owned(), "x".to_owned())
            ]
        );
        let sums: Vec<f64> = s.buckets[0].buckets.iter().map(|b| b.1.sum).collect();
        assert_eq!(sums, vec![1.5, 0.25]);
    }

    #[test]
    fn conversion_error_without_filter_fails() {
        let (st, post, r) = stages(r#"sum_over_time({app="a"} | json | unwrap took [1m])"#);
        let u = r.range.unwrap.as_ref().unwrap();
        let ex = Extract {
            op: r.op,
            unwrap: Some((u.label.as_str(), u.conversion)),
            grouping: None,
        };
        let mut body = BODY.as_bytes().to_vec();
        let err = extract(&mut body, &st, &post, &ex).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("pipeline error: 'SampleExtractionErr'"),
            "{err}"
        );
    }

    #[test]
    fn counts_per_parsed_label() {
        let (st, post, r) = stages(r#"count_over_time({app="a"} | json [1m])"#);
        let ex = Extract {
            op: r.op,
            unwrap: None,
            grouping: None,
        };
        let mut body = BODY.as_bytes().to_vec();
        let mut s = extract(&mut body, &st, &post, &ex).unwrap();
        s.buckets.sort_by(|a, b| a.labels.cmp(&b.labels));
        assert_eq!(s.buckets.len(), 3);
        assert_eq!(s.buckets[0].buckets[0].0, 1_000_000_000);
    }
}

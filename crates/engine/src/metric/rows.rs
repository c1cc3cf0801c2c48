//! Range aggregations over pipelines the proxy evaluates (parsers, numeric
//! label filters, `line_format`…): VictoriaLogs selects the entries, the
//! proxy runs the stages ([`crate::pipeline::Pipeline`]) and extracts one
//! sample per kept entry with Loki's rules, then the usual windows apply.
//!
//! Each sample becomes a bucket that ends at its own timestamp, so
//! [`crate::metric::window`] computes exact `(t − range, t]` windows.

mod series_index;

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use logql_parser::{Grouping, LabelFilter, RangeOp, Stage, UnwrapConversion};

use super::buckets::{BucketSeries, Stats};
use super::error::EngineError;
use super::grid::Grid;
use super::raw::RawSeries;
use super::series::sort_dedup;
use crate::discovery::stream::{with_detected_level, with_service_name};
use crate::labels::{parse_stream, sanitize_label_name};
use crate::ndjson::{Decoder, Rows, Source};
use crate::pipeline::Pipeline;
use crate::pipeline::hints::{Hints, MetricGrouping};
use crate::pipeline::label_filter::StrMatcher;
use crate::pipeline::labels::{ERROR, ERROR_DETAILS, PRESERVE_ERROR};
use crate::recycle::recycle;
use crate::work::Stop;
use series_index::SeriesIndex;

/// What to extract from each entry.
#[derive(Debug, Clone)]
pub struct Extract<'a> {
    /// The range function.
    pub op: RangeOp,
    /// `unwrap` label and conversion.
    pub unwrap: Option<(&'a str, UnwrapConversion)>,
    /// The range aggregation's own `by`/`without`.
    pub grouping: Option<&'a Grouping>,
    /// The windows the query evaluates: `(grid, range, offset)` in ns.
    /// Loki fails on an error sample only when a window holds it.
    pub windows: Option<(Grid, i64, i64)>,
    /// The grouping Loki's sample extractor builds its parser hints from:
    /// the range aggregation's own or the one a parent `sum` pushes down
    /// (Loki's `canInjectVectorGrouping`).
    pub hint: MetricGrouping<'a>,
    /// The range aggregation's whole pipeline as written (VictoriaLogs may
    /// run a prefix of it): the labels its stages read are required too.
    pub query_stages: &'a [Stage],
    /// The labels Loki's ingest would have added, synthesized per entry
    /// before the stages run (`service_name` on the stream,
    /// `detected_level` in the metadata), as for log queries.
    pub discovery: &'a logsql_ast::Discovery,
}

/// Whether a sample at `t` falls in one of the windows
/// `(tᵢ − offset − range, tᵢ − offset]` of `grid`.
pub fn in_window(grid: &Grid, range: i64, offset: i64, t: i64) -> bool {
    // The first step whose window ends at or after `t`.
    let from = t + offset - grid.start;
    let i = if from <= 0 {
        0
    } else {
        (from + grid.step - 1) / grid.step
    };
    let Ok(i) = u32::try_from(i) else {
        return false;
    };
    i < grid.len && grid.time(i) - offset - range < t
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
        .map_err(|e| e.to_string())
}

fn convert(v: &str, conv: UnwrapConversion) -> Result<f64, String> {
    match conv {
        UnwrapConversion::Plain => go::strconv::parse_float(v).map_err(|e| e.to_string()),
        UnwrapConversion::Duration | UnwrapConversion::DurationSeconds => parse_duration(v),
        UnwrapConversion::Bytes => go::humanize::try_parse_bytes(v)
            .map(|b| b as f64)
            .map_err(|e| e.to_string()),
    }
}

/// Runs `stages` (then `post` filters after unwrap) over the NDJSON rows and
/// extracts samples, polling `stop` every few rows.
///
/// # Errors
/// [`EngineError::Pipeline`] when a kept sample carries an error label (as
/// Loki fails), [`EngineError::Unsupported`] for a pipeline that does not
/// build, [`EngineError::Backend`] for malformed NDJSON,
/// [`EngineError::Stopped`] once `stop` says so.
pub fn extract(
    body: &mut (impl Source + ?Sized),
    stages: &[Stage],
    post: &[LabelFilter],
    ex: &Extract<'_>,
    stop: &Stop,
) -> Result<Samples, EngineError> {
    let hints = Hints::for_metric(ex.query_stages, post, ex.hint, ex.unwrap.map(|u| u.0))
        .map_err(EngineError::Unsupported)?;
    let mut pipeline = Pipeline::new(stages)
        .map_err(|e| EngineError::Unsupported(e.to_string()))?
        .discovering(ex.discovery.clone())
        .with_hints(hints);
    // `__error__` filters after unwrap read the conversion error, which the
    // proxy sets itself; the other post filters run as a pipeline.
    let (err_filters, other): (Vec<&LabelFilter>, Vec<&LabelFilter>) = post
        .iter()
        .partition(|f| matches!(f, LabelFilter::Matcher(m) if m.name == ERROR));
    let err_filters = ErrorFilters::compile(&err_filters)?;
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
    // Each series once, owned; a row finds its series by its borrowed labels.
    let mut series = SeriesIndex::default();
    // The row's labels, borrowed from the pipelines (its allocation reused).
    let mut scratch: Vec<(Cow<'static, str>, Cow<'static, str>)> = Vec::new();
    // The row's metadata, likewise.
    let mut meta_buf: Vec<(Cow<'static, str>, &'static str)> = Vec::new();
    let mut first_error: Option<(i64, String, String)> = None;
    // Loki-named stream labels (with a derived `service_name`), once per stream.
    // And whether the stream was ingested as OTLP (`crate::discovery::otel`).
    let mut streams: HashMap<&str, crate::discovery::otel::StreamLabels> = HashMap::new();
    for (i, row) in rows.rows.iter().enumerate() {
        stop.every(i)?;
        let (stream, otlp): (&[(String, String)], bool) = match streams.entry(row.stream) {
            Entry::Occupied(e) => {
                let (s, o) = e.into_mut();
                (s, *o)
            }
            Entry::Vacant(e) => {
                let parsed =
                    parse_stream(row.stream).map_err(|e| EngineError::Backend(e.to_string()))?;
                let mut v: Vec<(String, String)> = parsed
                    .iter()
                    .map(|(n, v)| (sanitize_label_name(n).into_owned(), v.to_string()))
                    .collect();
                v.sort();
                with_service_name(&mut v, ex.discovery);
                let otlp =
                    crate::discovery::otel::is_otlp_stream(parsed.iter().map(|(k, _)| k.as_ref()));
                let (s, o) = e.insert((v, otlp));
                (&*s, *o)
            }
        };
        let fields = rows.fields_of(row);
        let mut meta: Vec<(Cow<'_, str>, &str)> = recycle(std::mem::take(&mut meta_buf));
        crate::discovery::otel::push_metadata(
            otlp,
            fields.iter().copied().filter(|(n, _)| {
                !stream
                    .iter()
                    .any(|(k, _)| k == sanitize_label_name(n).as_ref())
            }),
            &mut meta,
        );
        if ex.discovery.log_levels {
            with_detected_level(stream, &mut meta, row.msg);
        }
        let kept = pipeline.process(
            row.time_ns,
            row.msg,
            stream.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            meta.iter().map(|(n, v)| (n.as_ref(), *v)),
        );
        meta_buf = recycle(meta);
        if !kept {
            continue;
        }
        let mut labels: Vec<(Cow<'_, str>, Cow<'_, str>)> = recycle(std::mem::take(&mut scratch));
        // Every way out of the row gives the buffer back (`break 'row`).
        'row: {
            let lbs = pipeline.labels();
            lbs.for_each(|n, v, _| labels.push((Cow::Borrowed(n), Cow::Borrowed(v))));
            let err = lbs.err();
            if !err.is_empty() {
                labels.push((Cow::Borrowed(ERROR), Cow::Borrowed(err)));
                let d = lbs.err_details();
                if !d.is_empty() {
                    labels.push((Cow::Borrowed(ERROR_DETAILS), Cow::Borrowed(d)));
                }
            }
            let bytes = pipeline.line().len() as f64;
            let mut value = 1.0;
            if let Some((label, conv)) = ex.unwrap {
                let text = labels
                    .iter()
                    .find(|(n, _)| n == label)
                    .map_or("", |(_, v)| v.as_ref());
                if text.is_empty() {
                    break 'row;
                }
                match convert(text, conv) {
                    Ok(v) => value = v,
                    Err(details) => {
                        if !has_error(&labels) {
                            labels
                                .push((Cow::Borrowed(ERROR), Cow::Borrowed("SampleExtractionErr")));
                            labels.push((Cow::Borrowed(ERROR_DETAILS), Cow::Owned(details)));
                        }
                        value = 0.0;
                    }
                }
                let err_now = labels
                    .iter()
                    .find(|(n, _)| n == ERROR)
                    .map_or("", |(_, v)| v.as_ref());
                if !err_filters.keep(err_now) {
                    break 'row;
                }
                if !post_stages.is_empty() {
                    let kept = post_pipeline.process(
                        row.time_ns,
                        pipeline.line(),
                        labels.iter().map(|(n, v)| (n.as_ref(), v.as_ref())),
                        std::iter::empty(),
                    );
                    labels.clear();
                    if !kept {
                        break 'row;
                    }
                    let post = post_pipeline.labels();
                    post.for_each(|n, v, _| labels.push((Cow::Borrowed(n), Cow::Borrowed(v))));
                    let err = post.err();
                    if !err.is_empty() && !has_error(&labels) {
                        labels.push((Cow::Borrowed(ERROR), Cow::Borrowed(err)));
                    }
                }
                // Post-unwrap filters see the unwrapped label (Loki keeps it in
                // the builder); the sample's series does not carry it, unless
                // the sample failed (Loki names the whole label set then).
                if !has_error(&labels) {
                    labels.retain(|(n, _)| n != label);
                }
            }
            sort_dedup(&mut labels);
            let preserved = labels
                .iter()
                .any(|(n, v)| n == PRESERVE_ERROR && v == "true");
            if preserved {
                // Loki keeps an error asked for (`by (__error__)`, an
                // `__error__` filter) as a series with every label: grouping
                // does not apply to an entry with an error.
                series.samples(&labels).push((row.time_ns, value, bytes));
                break 'row;
            }
            if let Some(e) = labels.iter().find(|(n, _)| n == ERROR).map(|(_, e)| e) {
                // Loki fails at the first step whose window holds an error
                // sample, naming one of that window's error series: the
                // earliest sample's here (Loki's pick among several is its map
                // order, which varies run to run).
                let counted = ex
                    .windows
                    .is_none_or(|(g, range, offset)| in_window(&g, range, offset, row.time_ns));
                if counted && first_error.as_ref().is_none_or(|f| row.time_ns < f.0) {
                    let mut text = Vec::new();
                    crate::labels::write_label_string(
                        &mut text,
                        labels.iter().map(|(n, v)| (n.as_ref(), v.as_ref())),
                    );
                    first_error = Some((
                        row.time_ns,
                        e.to_string(),
                        String::from_utf8_lossy(&text).into_owned(),
                    ));
                }
                break 'row;
            }
            if let Some(g) = ex.grouping {
                labels.retain(|(n, _)| g.labels.iter().any(|l| l == n) != g.without);
            }
            series.samples(&labels).push((row.time_ns, value, bytes));
        }
        scratch = recycle(labels);
    }
    if let Some((_, err, series)) = first_error {
        return Err(EngineError::Pipeline(err, series));
    }
    let mut out = Samples::default();
    for (labels, mut s) in series.into_sorted() {
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
                suspect: 0.0,
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

/// Whether `labels` carry Loki's error label.
fn has_error(labels: &[(Cow<'_, str>, Cow<'_, str>)]) -> bool {
    labels.iter().any(|(n, _)| n == ERROR)
}

/// The `__error__` matchers after `unwrap`, compiled once per query (a
/// regex matcher holds its compiled regex): they read the conversion error
/// the proxy sets itself, on every sample.
#[derive(Debug)]
struct ErrorFilters(Vec<StrMatcher>);

impl ErrorFilters {
    /// Compiles the matchers of `filters` (other filters are not theirs).
    ///
    /// # Errors
    /// [`EngineError::Unsupported`] for a regex that does not compile, as the
    /// other post filters report it.
    fn compile(filters: &[&LabelFilter]) -> Result<Self, EngineError> {
        filters
            .iter()
            .filter_map(|f| match f {
                LabelFilter::Matcher(m) => Some(StrMatcher::new(m)),
                _ => None,
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
            .map_err(EngineError::Unsupported)
    }

    /// Whether every matcher holds for the error value `err` (`""` when none).
    fn keep(&self, err: &str) -> bool {
        self.0.iter().all(|m| m.matches(err))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::series::Labels;

    static OFF: logsql_ast::Discovery = logsql_ast::Discovery {
        service_name_labels: Vec::new(),
        log_levels: false,
    };

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

    /// The extraction a plain (ungrouped, unwindowed) range aggregation runs.
    fn plain(r: &logql_parser::RangeAggregation) -> Extract<'_> {
        Extract {
            op: r.op,
            unwrap: r.range.unwrap.as_ref().map(logql_parser::Unwrap::target),
            grouping: None,
            windows: None,
            hint: MetricGrouping::All,
            query_stages: &r.range.log.pipeline,
            discovery: &OFF,
        }
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
        let ex = plain(&r);
        let mut body = BODY.as_bytes().to_vec();
        let s = extract(&mut body, &st, &post, &ex, &Stop::never()).unwrap();
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
        let ex = plain(&r);
        let mut body = BODY.as_bytes().to_vec();
        let err = extract(&mut body, &st, &post, &ex, &Stop::never()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("pipeline error: 'SampleExtractionErr'"),
            "{err}"
        );
    }

    #[test]
    fn error_matchers_are_compiled_once_before_the_rows() {
        // What the row loop holds is compiled matchers (no pattern text to
        // build a regex from per row), built once from the post filters.
        let (_, post, _) = stages(
            r#"sum_over_time({app="a"} | json | unwrap took | __error__!~"Sample.+Err" | __error__=~"|Sample(Extraction)?Err" [1m])"#,
        );
        let errs: Vec<&LabelFilter> = post.iter().collect();
        let f = ErrorFilters::compile(&errs).unwrap();
        assert_eq!(f.0.len(), 2);
        assert!(f.keep(""));
        assert!(!f.keep("SampleExtractionErr"), "dropped by !~");
        assert!(!f.keep("JSONParserErr"), "not matched by =~ (anchored)");
        let f = ErrorFilters::compile(&errs[1..]).unwrap();
        assert!(f.keep("SampleErr") && f.keep("SampleExtractionErr"));
        assert!(!f.keep("xSampleErr"), "anchored");
    }

    #[test]
    fn a_regex_error_filter_after_unwrap_drops_failed_samples() {
        let (st, post, r) = stages(
            r#"sum_over_time({app="a"} | json | unwrap duration(took) | __error__!~"Sample.*" [1m])"#,
        );
        let ex = plain(&r);
        let mut body = BODY.as_bytes().to_vec();
        let s = extract(&mut body, &st, &post, &ex, &Stop::never()).unwrap();
        let sums: Vec<f64> = s.buckets[0].buckets.iter().map(|b| b.1.sum).collect();
        assert_eq!(sums, vec![1.5, 0.25]);
    }

    #[test]
    fn extraction_stops_when_told() {
        let (st, post, r) = stages(r#"count_over_time({app="a"} | json [1m])"#);
        let ex = plain(&r);
        let stop = Stop::at(crate::work::Deadline::after(std::time::Duration::ZERO));
        let mut body = BODY.as_bytes().to_vec();
        let err = extract(&mut body, &st, &post, &ex, &stop).unwrap_err();
        assert!(matches!(err, EngineError::Stopped(_)), "{err:?}");
    }

    #[test]
    fn counts_per_parsed_label() {
        let (st, post, r) = stages(r#"count_over_time({app="a"} | json [1m])"#);
        let ex = plain(&r);
        let mut body = BODY.as_bytes().to_vec();
        let mut s = extract(&mut body, &st, &post, &ex, &Stop::never()).unwrap();
        s.buckets.sort_by(|a, b| a.labels.cmp(&b.labels));
        assert_eq!(s.buckets.len(), 3);
        assert_eq!(s.buckets[0].buckets[0].0, 1_000_000_000);
    }

    #[test]
    fn error_outside_every_window_does_not_fail() {
        // Steps at 10 s and 20 s with a 2 s range: windows (8, 10] and (18, 20].
        let grid = Grid::range(10_000_000_000, 20_000_000_000, 10_000_000_000);
        let r = 2_000_000_000;
        assert!(in_window(&grid, r, 0, 9_000_000_000));
        assert!(in_window(&grid, r, 0, 10_000_000_000));
        assert!(!in_window(&grid, r, 0, 8_000_000_000));
        assert!(!in_window(&grid, r, 0, 12_000_000_000));
        assert!(!in_window(&grid, r, 0, 21_000_000_000));
        // An offset shifts the windows back: (3, 5] and (13, 15].
        assert!(in_window(&grid, r, 5_000_000_000, 4_000_000_000));
        assert!(!in_window(&grid, r, 5_000_000_000, 9_000_000_000));
        // The bad duration of BODY is at 3 s: outside (0, 2], so no error;
        // a window holding it fails.
        let (st, post, rg) =
            stages(r#"sum_over_time({app="a"} | json | unwrap duration(took) [1m])"#);
        let ex = Extract {
            windows: Some((Grid::instant(2_000_000_000), 2_000_000_000, 0)),
            ..plain(&rg)
        };
        let mut body = BODY.as_bytes().to_vec();
        assert!(extract(&mut body, &st, &post, &ex, &Stop::never()).is_ok());
        let ex = Extract {
            windows: Some((Grid::instant(3_000_000_000), 2_000_000_000, 0)),
            ..ex
        };
        let mut body = BODY.as_bytes().to_vec();
        let err = extract(&mut body, &st, &post, &ex, &Stop::never())
            .unwrap_err()
            .to_string();
        assert!(err.contains("took=\"bad\""), "{err}");
    }

    #[test]
    fn post_filters_see_the_unwrapped_label() {
        let (st, post, r) = stages(
            r#"sum_over_time({app="a"} | json | unwrap duration(took) | took != "250ms" | __error__="" [1m])"#,
        );
        let ex = plain(&r);
        let mut body = BODY.as_bytes().to_vec();
        let s = extract(&mut body, &st, &post, &ex, &Stop::never()).unwrap();
        let sums: Vec<f64> = s
            .buckets
            .iter()
            .flat_map(|b| b.buckets.iter().map(|x| x.1.sum))
            .collect();
        assert_eq!(sums, vec![1.5]);
        assert!(s.buckets[0].labels.iter().all(|(n, _)| n != "took"));
    }

    #[test]
    fn discovery_adds_service_name_and_detected_level_per_entry() {
        let body = concat!(
            r#"{"_time":"1970-01-01T00:00:01Z","_stream":"{app=\"api\"}","_msg":"level=error boom","app":"api"}"#,
            "\n",
            r#"{"_time":"1970-01-01T00:00:02Z","_stream":"{app=\"api\"}","_msg":"fine","app":"api","level":"WARNING"}"#,
            "\n",
            r#"{"_time":"1970-01-01T00:00:03Z","_stream":"{env=\"x\"}","_msg":"[ERROR] disk","env":"x"}"#,
            "\n",
            r#"{"_time":"1970-01-01T00:00:04Z","_stream":"{app=\"api\"}","_msg":"ERROR again","app":"api"}"#,
            "\n",
        );
        let on = logsql_ast::Discovery {
            service_name_labels: vec!["app".into()],
            log_levels: true,
        };
        let (st, post, r) = stages(r#"count_over_time({app="api"} | detected_level="error" [1m])"#);
        let g = Grouping {
            without: false,
            labels: vec!["service_name".into(), "detected_level".into()],
        };
        let ex = Extract {
            op: r.op,
            unwrap: None,
            grouping: Some(&g),
            windows: None,
            hint: MetricGrouping::All,
            query_stages: &st,
            discovery: &on,
        };
        let mut b = body.as_bytes().to_vec();
        let s = extract(&mut b, &st, &post, &ex, &Stop::never()).unwrap();
        let got: Vec<(Labels, Vec<i64>)> = s
            .buckets
            .iter()
            .map(|b| (b.labels.clone(), b.buckets.iter().map(|x| x.0).collect()))
            .collect();
        let l = |lvl: &str, svc: &str| -> Labels {
            vec![
                ("detected_level".to_owned(), lvl.to_owned()),
                ("service_name".to_owned(), svc.to_owned()),
            ]
        };
        // The filter on the synthesized label keeps the error entries only.
        assert_eq!(
            got,
            vec![
                (l("error", "api"), vec![1_000_000_000, 4_000_000_000]),
                (l("error", "unknown_service"), vec![3_000_000_000]),
            ]
        );
        // Without discovery nothing is synthesized: the filter reads a
        // stored label, which no entry has.
        let ex = Extract {
            discovery: &OFF,
            ..ex
        };
        let mut b = body.as_bytes().to_vec();
        assert!(
            extract(&mut b, &st, &post, &ex, &Stop::never())
                .unwrap()
                .buckets
                .is_empty()
        );
    }

    #[test]
    fn hinted_conversion_error_names_only_hinted_parsed_labels() {
        let (st, post, r) = stages(r#"sum_over_time({app="a"} | json | unwrap took [1m])"#);
        let u = r.range.unwrap.as_ref().unwrap();
        let groups = vec!["app".to_owned()];
        let ex = Extract {
            op: r.op,
            unwrap: Some(u.target()),
            grouping: None,
            windows: None,
            hint: MetricGrouping::By(&groups),
            query_stages: &st,
            discovery: &OFF,
        };
        let mut body = BODY.as_bytes().to_vec();
        let err = extract(&mut body, &st, &post, &ex, &Stop::never())
            .unwrap_err()
            .to_string();
        // `lvl` is parsed but neither grouped nor unwrapped: Loki's hints skip it.
        assert!(err.contains("app=\"a\", took=\"1.5s\"}"), "{err}");
        assert!(!err.contains("lvl"), "{err}");
        let ex = Extract {
            hint: MetricGrouping::All,
            ..ex
        };
        let mut body = BODY.as_bytes().to_vec();
        let err = extract(&mut body, &st, &post, &ex, &Stop::never())
            .unwrap_err()
            .to_string();
        assert!(err.contains("lvl=\"x\""), "{err}");
    }

    /// Loki's `__error_details__` is Go's `time.ParseDuration` error, once.
    #[test]
    fn duration_conversion_error_is_gos_text() {
        assert_eq!(
            super::parse_duration("5x"),
            Err(r#"time: unknown unit "x" in duration "5x""#.to_owned())
        );
    }
}

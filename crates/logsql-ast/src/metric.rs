//! Lowering of LogQL range aggregations into VictoriaLogs `stats` requests.
//!
//! A range aggregation (`rate({…}[5m])`, `sum_over_time({…} | unwrap x [1m])`)
//! becomes a [`RangePlan`]: the LogsQL that selects the samples (the lowered
//! log pipeline, the extraction of the unwrapped value and its guards), and
//! the statistics the proxy needs per time bucket. The proxy picks the bucket
//! size and grouping ([`RangePlan::stats_query`]) and combines buckets over
//! each sliding window itself, so VictoriaLogs only ever returns small
//! per-bucket rows, never raw entries.
//!
//! Only pipelines VictoriaLogs evaluates exactly are lowered: when
//! [`crate::lower_log`] leaves stages to the proxy (parsers, numeric label
//! filters, `line_format`…), counting in VictoriaLogs would be wrong, so the
//! lowering refuses with [`LowerError::Unsupported`]. The exception is a
//! `| json` that [`parsed`] can guard ([`RangePlan::lower_with_parsers`]):
//! it runs in VictoriaLogs, and the proxy checks the guard's count.

pub mod line_level;
pub(crate) mod parsed;
mod stats;
mod unwrap;

use logql_parser::{LabelFilter, LogExpr, RangeAggregation, RangeOp, Stage, UnwrapConversion};

pub use self::stats::{StatsFunc, bucket_start};
pub use self::unwrap::{MetricPipe, NUMBER_FIELD, VALUE_FIELD, guard_regex};

use crate::error::LowerError;
use crate::filter::Filter;
use crate::lower::Discovery;
use crate::query::Query;

/// How the unwrapped number relates to Loki's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueScale {
    /// The number is Loki's value (plain floats, bytes).
    One,
    /// VictoriaLogs parses durations to nanoseconds; Loki reports seconds.
    NanosToSeconds,
}

impl ValueScale {
    /// What a VictoriaLogs number is divided by to give Loki's value.
    pub fn divisor(self) -> f64 {
        match self {
            ValueScale::One => 1.0,
            ValueScale::NanosToSeconds => 1e9,
        }
    }
}

/// What VictoriaLogs computes for one range aggregation.
#[derive(Debug, Clone, PartialEq)]
pub struct RangePlan {
    /// The range function.
    pub op: RangeOp,
    /// Selects the entries: the lowered log pipeline.
    pub query: Query,
    /// Pipes after [`RangePlan::query`] extracting and guarding the unwrapped value.
    pub value_pipes: Vec<MetricPipe>,
    /// `Some` when the aggregation unwraps a label: the number is in [`NUMBER_FIELD`].
    pub unwrap: Option<ValueScale>,
    /// The unwrap conversion, when the aggregation unwraps a label.
    pub conversion: Option<UnwrapConversion>,
    /// Whether the plan counts values that fail Loki's conversion
    /// ([`StatsFunc::Errors`]); set when no post-unwrap filter drops them, so
    /// the proxy can fail as Loki does instead of skipping them.
    pub check_errors: bool,
    /// Whether a parser runs in VictoriaLogs ([`parsed`]): the statistics
    /// then count suspect rows ([`StatsFunc::Suspect`]), and any suspect row
    /// means the counts are not Loki's.
    pub guarded: bool,
}

impl RangePlan {
    /// The per-bucket statistics this function needs.
    pub fn funcs(&self) -> Vec<StatsFunc> {
        let mut out = match (self.op, self.unwrap.is_some()) {
            (RangeOp::BytesOverTime | RangeOp::BytesRate, _) => vec![StatsFunc::Bytes],
            (RangeOp::CountOverTime | RangeOp::AbsentOverTime, _) | (RangeOp::Rate, false) => {
                vec![StatsFunc::Count]
            }
            (RangeOp::Rate | RangeOp::SumOverTime, true) => vec![StatsFunc::Count, StatsFunc::Sum],
            (RangeOp::AvgOverTime, _) => vec![StatsFunc::Count, StatsFunc::Sum],
            (RangeOp::MinOverTime, _) => vec![StatsFunc::Count, StatsFunc::Min],
            (RangeOp::MaxOverTime, _) => vec![StatsFunc::Count, StatsFunc::Max],
            (RangeOp::StddevOverTime | RangeOp::StdvarOverTime, _) => vec![
                StatsFunc::Count,
                StatsFunc::Sum,
                StatsFunc::SumSquares,
                StatsFunc::Min,
                StatsFunc::Max,
            ],
            _ => vec![StatsFunc::Count],
        };
        if self.check_errors {
            out.push(StatsFunc::Errors);
        }
        if self.guarded {
            out.push(StatsFunc::Suspect);
        }
        out
    }

    /// Whether the function needs every raw value rather than bucket statistics.
    pub fn needs_raw(&self) -> bool {
        matches!(
            self.op,
            RangeOp::QuantileOverTime
                | RangeOp::FirstOverTime
                | RangeOp::LastOverTime
                | RangeOp::RateCounter
        )
    }

    /// The LogsQL for `/select/logsql/query` computing [`RangePlan::funcs`] per bucket.
    ///
    /// Buckets are `[b, b + bucket)` placed by `offset`, all in nanoseconds:
    /// where they start depends on the VictoriaLogs release (v1.26:
    /// `b ≡ offset`, v1.51: `b ≡ −offset (mod bucket)`; see [`bucket_start`]).
    /// `by` are the VictoriaLogs fields to group by.
    pub fn stats_query(&self, bucket_ns: i64, offset_ns: i64, by: &[String]) -> String {
        self.stats_query_after(bucket_ns, offset_ns, by, "")
    }

    /// [`RangePlan::stats_query`] with `pipes` (each starting with ` | `)
    /// between the selection and the statistics, e.g. the pipes computing
    /// a line's level ([`crate::line_level::pipes`]) to group by.
    pub fn stats_query_after(
        &self,
        bucket_ns: i64,
        offset_ns: i64,
        by: &[String],
        pipes: &str,
    ) -> String {
        let mut q = self.selection();
        q.push_str(pipes);
        if self.funcs().contains(&StatsFunc::SumSquares) {
            q.push_str(" | ");
            q.push_str(&MetricPipe::Square.to_string());
        }
        q.push_str(" | ");
        q.push_str(&stats::stats_pipe(
            bucket_ns,
            offset_ns,
            by,
            &self.funcs(),
            self.conversion.map_or("", guard_regex),
        ));
        q
    }

    /// The LogsQL fetching raw samples: only `_time`, the number and `by`,
    /// at most `limit` rows (the proxy asks for one more than it accepts).
    pub fn raw_query(&self, by: &[String], limit: u64) -> String {
        let mut fields = vec!["_time".to_owned()];
        if self.unwrap.is_some() {
            fields.push(NUMBER_FIELD.to_owned());
        }
        if self.guarded {
            fields.push(parsed::SUSPECT_FIELD.to_owned());
        }
        fields.extend(by.iter().cloned());
        let mut q = self.selection();
        q.push_str(&format!(
            " | {} | limit {limit}",
            MetricPipe::Fields(fields)
        ));
        q
    }

    /// The LogsQL selecting the samples (entries and, with unwrap, their numbers).
    pub fn selection(&self) -> String {
        let mut q = self.query.to_string();
        for p in &self.value_pipes {
            q.push_str(" | ");
            q.push_str(&p.to_string());
        }
        q
    }

    /// The LogsQL listing the field names of the selected entries
    /// (for `/select/logsql/field_names`), used to group by every label.
    pub fn field_names_query(&self) -> String {
        self.selection()
    }

    /// Lowers a range aggregation whose selector and label filters see the
    /// labels `discovery` synthesizes, as [`crate::lower_log`] does for
    /// log queries: `{service_name="api"}` selects the streams whose derived
    /// `service_name` is `api`, and a label filter on a synthesized label is
    /// a proxy stage (so the lowering refuses and the proxy counts rows).
    ///
    /// # Errors
    /// [`LowerError::Unsupported`] when part of the pipeline would run in the
    /// proxy (parsers, numeric label filters, …) or the conversion cannot be
    /// checked exactly.
    pub fn lower(r: &RangeAggregation, discovery: &Discovery) -> Result<RangePlan, LowerError> {
        lower_range_with(r, discovery, None)
    }

    /// [`RangePlan::lower`], and a `| json` with the label filters and
    /// `unwrap` after it runs in VictoriaLogs behind the guard of
    /// [`parsed`], for an aggregation whose series carry only the labels
    /// `grouping` (Loki's parser hints then name every label the parser
    /// must produce).
    ///
    /// # Errors
    /// As [`RangePlan::lower`], and for the pipelines [`parsed`] cannot guard.
    pub fn lower_with_parsers(
        r: &RangeAggregation,
        discovery: &Discovery,
        grouping: &[String],
    ) -> Result<RangePlan, LowerError> {
        lower_range_with(r, discovery, Some(grouping))
    }
}

/// Lowers a range aggregation without discovery (tests; requests go through
/// [`RangePlan::lower`] with their settings).
#[cfg(test)]
fn lower_range(r: &RangeAggregation) -> Result<RangePlan, LowerError> {
    lower_range_with(r, &Discovery::default(), None)
}

fn lower_range_with(
    r: &RangeAggregation,
    discovery: &Discovery,
    grouping: Option<&[String]>,
) -> Result<RangePlan, LowerError> {
    let log = &r.range.log;
    let mut stages: Vec<Stage> = log.pipeline.clone();
    let mut drops_errors = false;
    if let Some(u) = &r.range.unwrap {
        for f in &u.post_filters {
            match unwrap::error_filter(f) {
                Some(true) => drops_errors = true,
                Some(false) => {
                    return Err(LowerError::Unsupported(
                        "post-unwrap filter keeping only conversion errors".into(),
                    ));
                }
                None => stages.push(Stage::LabelFilter(f.clone())),
            }
        }
    }
    let plan = crate::lower_log(
        &LogExpr {
            selector: log.selector.clone(),
            pipeline: stages,
        },
        discovery,
    )?;
    let mut query = plan.query;
    let mut guarded = false;
    if !plan.proxy_stages.is_empty() {
        let refused = || {
            LowerError::Unsupported(format!(
                "metric query over a pipeline stage that runs in the proxy ({}); \
                 only selectors, line filters and string label filters on stored labels are counted in VictoriaLogs",
                stage_name(&plan.proxy_stages[0])
            ))
        };
        let grouping = grouping.ok_or_else(refused)?;
        let pushed = push_parser(r, &plan.proxy_stages, grouping, discovery)
            .map_err(|parsed::Refused(why)| LowerError::Unsupported(why))?;
        guarded = !pushed.is_empty();
        query.pipes.extend(pushed);
    }
    let mut value_pipes = Vec::new();
    let mut unwrap_scale = None;
    let mut check_errors = false;
    if let Some(u) = &r.range.unwrap {
        let conv = u.conversion;
        value_pipes.push(MetricPipe::Copy(u.label.clone()));
        value_pipes.push(MetricPipe::Filter(Filter::NonEmpty(VALUE_FIELD.to_owned())));
        let guard = Filter::Regex {
            field: VALUE_FIELD.to_owned(),
            regex: guard_regex(conv).to_owned(),
        };
        if drops_errors {
            value_pipes.push(MetricPipe::Filter(guard));
        } else {
            check_errors = true;
        }
        if guarded {
            for p in &mut value_pipes {
                if let MetricPipe::Filter(f) = p {
                    *f = parsed::or_suspect(std::mem::replace(f, Filter::All));
                }
            }
        }
        if matches!(
            conv,
            UnwrapConversion::Duration | UnwrapConversion::DurationSeconds
        ) {
            value_pipes.push(MetricPipe::Micros);
        }
        value_pipes.push(MetricPipe::Number);
        unwrap_scale = Some(match conv {
            UnwrapConversion::Duration | UnwrapConversion::DurationSeconds => {
                ValueScale::NanosToSeconds
            }
            UnwrapConversion::Plain | UnwrapConversion::Bytes => ValueScale::One,
        });
    } else if needs_unwrap(r.op) {
        return Err(LowerError::Unsupported(format!(
            "{:?} without unwrap",
            r.op
        )));
    }
    Ok(RangePlan {
        op: r.op,
        query,
        value_pipes,
        unwrap: unwrap_scale,
        conversion: r.range.unwrap.as_ref().map(|u| u.conversion),
        check_errors,
        guarded,
    })
}

/// The pipes running the pipeline's parser and what follows it in
/// VictoriaLogs ([`parsed`]); none when Loki skips the parser (a range
/// aggregation that needs no label and a pipeline that reads none:
/// Loki's `NoLabels` hint).
fn push_parser(
    r: &RangeAggregation,
    proxy_stages: &[Stage],
    grouping: &[String],
    discovery: &Discovery,
) -> Result<Vec<crate::pipe::Pipe>, parsed::Refused> {
    let split = parsed::split(proxy_stages)?;
    let mut names: Vec<String> = Vec::new();
    let mut numeric = Vec::new();
    let mut read_anywhere = Vec::new();
    for s in &r.range.log.pipeline {
        if let Stage::LabelFilter(f) = s {
            parsed::filter_names(f, &mut read_anywhere, &mut Vec::new());
        }
    }
    for f in &split.filters {
        if !parsed::supported_filter(f) {
            return Err(parsed::Refused(
                "a duration, bytes or ip() label filter after the parser".into(),
            ));
        }
        parsed::filter_names(f, &mut names, &mut numeric);
    }
    let unwrap = r.range.unwrap.as_ref();
    let post = unwrap
        .map(|u| u.post_filters.as_slice())
        .unwrap_or_default();
    let no_labels =
        grouping.is_empty() && read_anywhere.is_empty() && unwrap.is_none() && post.is_empty();
    if no_labels {
        return Ok(Vec::new());
    }
    for n in unwrap.map(|u| &u.label).into_iter().chain(grouping) {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    parsed::needed_names(&names)?;
    if let Some(n) = names
        .iter()
        .find(|n| discovery.synthesizes(n) || crate::otel::index_attribute(n).is_some())
    {
        return Err(parsed::Refused(format!(
            "label {n:?} is derived per entry or from OTel attributes"
        )));
    }
    let filters: Vec<Filter> = split
        .filters
        .iter()
        .map(crate::lower::label_filter)
        .collect::<Result<_, _>>()
        .map_err(|e| parsed::Refused(e.to_string()))?;
    let filter = Filter::and(filters);
    let drops_errors =
        split.drops_errors || post.iter().any(|f| unwrap::error_filter(f) == Some(true));
    let pushdown = parsed::ParsedPushdown {
        format: split.format,
        names,
        numeric,
        unwrapped: match unwrap {
            Some(u) => Some((u.label.clone(), unwrap_grammar(r.op, u.conversion)?)),
            None => None,
        },
        filter,
        drops_errors,
    };
    let mut pipes = pushdown.pipes();
    let keep = pushdown.row_filter();
    if keep != Filter::All {
        pipes.push(crate::pipe::Pipe::Filter(parsed::or_suspect(keep)));
    }
    Ok(pipes)
}

/// The unwrapped values a pushed-down aggregation accepts as they are;
/// any other is suspect.
///
/// Only integers: VictoriaLogs parses a decimal as its integer part plus its
/// fraction, which is not always Go's correctly rounded `ParseFloat` (a
/// quantile of the split and unsplit answers of `tests/e2e/windows_property`
/// came out 0.30000000000000004 against 0.3), and it adds a bucket's values
/// in the order its workers meet them where Loki adds in time order. Sums of
/// integers below 10^9 are exact in any order (up to 9 million values a
/// bucket); other functions take integers of up to 15 digits, which both
/// parse exactly. Durations and sizes, and Loki's running mean and variance
/// (`avg_over_time` unless rewritten into a sum and a count,
/// `stddev`/`stdvar_over_time`), stay in the proxy.
fn unwrap_grammar(
    op: RangeOp,
    conversion: UnwrapConversion,
) -> Result<&'static str, parsed::Refused> {
    if conversion != UnwrapConversion::Plain {
        return Err(parsed::Refused(
            "unwrap of a parsed duration or size is converted in the proxy".into(),
        ));
    }
    match op {
        RangeOp::SumOverTime | RangeOp::Rate => Ok(r"^-?(?:0|[1-9][0-9]{0,8})$"),
        RangeOp::AvgOverTime | RangeOp::StddevOverTime | RangeOp::StdvarOverTime => {
            Err(parsed::Refused(format!(
                "{op:?} of parsed values is Loki's running statistic"
            )))
        }
        _ => Ok(r"^-?(?:0|[1-9][0-9]{0,14})$"),
    }
}

fn needs_unwrap(op: RangeOp) -> bool {
    !matches!(
        op,
        RangeOp::CountOverTime
            | RangeOp::Rate
            | RangeOp::BytesOverTime
            | RangeOp::BytesRate
            | RangeOp::AbsentOverTime
    )
}

fn stage_name(s: &Stage) -> &'static str {
    match s {
        Stage::LineFilter(_) => "line filter",
        Stage::Parser(_) => "parser",
        Stage::LabelFilter(LabelFilter::Matcher(_)) => "label filter",
        Stage::LabelFilter(_) => "numeric label filter",
        Stage::LineFormat(_) => "line_format",
        Stage::LabelFormat(_) => "label_format",
        Stage::Drop(_) => "drop",
        Stage::Keep(_) => "keep",
        Stage::Decolorize => "decolorize",
    }
}

#[cfg(test)]
mod tests {
    use logql_parser::{Expr, MetricExpr};

    use super::*;

    fn range(q: &str) -> RangeAggregation {
        match logql_parser::parse(q).unwrap() {
            Expr::Metric(MetricExpr::RangeAggregation(r)) => r,
            other => panic!("not a range aggregation: {other:?}"),
        }
    }

    #[test]
    fn count_is_a_plain_count_per_bucket() {
        let p = lower_range(&range(r#"count_over_time({app="api"} |= "err" [5m])"#)).unwrap();
        assert_eq!(p.funcs(), vec![StatsFunc::Count]);
        assert_eq!(
            p.stats_query(60_000_000_000, 1, &["app".to_owned()]),
            r#"{app="api"} and _msg:~"err" | stats by (_time:60000000000ns offset 1ns, "app") count() "__lokivl_c""#
        );
    }

    #[test]
    fn bytes_sum_message_lengths() {
        let p = lower_range(&range(r#"bytes_rate({app="api"}[1m])"#)).unwrap();
        assert_eq!(
            p.stats_query(1_000_000_000, 0, &[]),
            r#"{app="api"} | stats by (_time:1000000000ns offset 0ns) sum_len(_msg) "__lokivl_b""#
        );
    }

    #[test]
    fn unwrap_with_error_filter_guards_the_value() {
        let p = lower_range(&range(
            r#"avg_over_time({app="api"} | unwrap latency | __error__="" [1m])"#,
        ))
        .unwrap();
        assert!(!p.check_errors);
        assert_eq!(p.unwrap, Some(ValueScale::One));
        let q = p.stats_query(1_000_000_000, 0, &[]);
        assert_eq!(
            q,
            r#"{app="api"} | copy "latency" as "__lokivl_v" | filter "__lokivl_v":* | filter "__lokivl_v":~"^[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?$" | math "__lokivl_v" as "__lokivl_n" | stats by (_time:1000000000ns offset 0ns) count() "__lokivl_c", sum("__lokivl_n") "__lokivl_s""#
        );
    }

    #[test]
    fn unwrap_without_error_filter_counts_errors() {
        let p = lower_range(&range(
            r#"max_over_time({app="api"} | unwrap duration(took) [1m])"#,
        ))
        .unwrap();
        assert!(p.check_errors);
        assert_eq!(p.unwrap, Some(ValueScale::NanosToSeconds));
        assert_eq!(
            p.funcs(),
            vec![StatsFunc::Count, StatsFunc::Max, StatsFunc::Errors]
        );
        let q = p.stats_query(1_000_000_000, 0, &[]);
        assert!(q.contains(r#"count() if (!"__lokivl_v":~"#), "{q}");
    }

    #[test]
    fn parsers_are_refused() {
        let err = lower_range(&range(r#"rate({app="api"} | json [1m])"#)).unwrap_err();
        assert!(err.to_string().contains("parser"), "{err}");
    }

    #[test]
    fn discovery_selects_derived_service_name() {
        let d = Discovery {
            service_name_labels: vec!["service".into(), "app".into()],
            log_levels: true,
        };
        let r = range(r#"count_over_time({service_name="api"} | drop __error__ [1m])"#);
        let p = RangePlan::lower(&r, &d).unwrap();
        assert_eq!(
            p.query.to_string(),
            r#"{service_name="api" or service_name="", "service.name"="api" or service_name="", "service.name"="", service="api" or service_name="", "service.name"="", service="", app="api"}"#
        );
        // Without discovery the selector reads the stored label (or its OTel attribute).
        assert_eq!(
            lower_range(&r).unwrap().query.to_string(),
            r#"{service_name="api" or service_name="", "service.name"="api"}"#
        );
        // A filter on a synthesized label runs in the proxy: not counted in VictoriaLogs.
        let r = range(r#"count_over_time({app="api"} | detected_level="error" [1m])"#);
        assert!(RangePlan::lower(&r, &d).is_err());
        assert!(lower_range(&r).is_ok());
    }

    #[test]
    fn raw_query_keeps_only_needed_fields() {
        let p = lower_range(&range(
            r#"quantile_over_time(0.5, {app="api"} | unwrap x | __error__="" [1m])"#,
        ))
        .unwrap();
        assert!(p.needs_raw());
        let q = p.raw_query(&["app".to_owned()], 1001);
        assert!(
            q.ends_with(r#" | fields _time, "__lokivl_n", "app" | limit 1001"#),
            "{q}"
        );
    }
}

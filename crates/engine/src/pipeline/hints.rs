//! Loki's parser hints (grafana/loki `pkg/logql/log/parser_hints.go`).
//!
//! Two effects, both visible in answers:
//!
//! * **Hint filters.** Every label filter stage that reads one label (not
//!   an `and`/`or` combination) is also evaluated the moment a parser sets
//!   that label, and a false result drops the line right there. This
//!   matters when a later stage changes the label: in Loki,
//!   `| logfmt | label_format level="{{ToUpper .level}}" | level="ERROR"`
//!   drops every line, because `level="ERROR"` already fails on the parsed
//!   lowercase value. The first filter naming a label is the one used.
//! * **Required labels** (metric queries only). A range aggregation grouped
//!   `by (…)` (its own grouping, or one a parent `sum by` pushes down) makes
//!   the parsers extract only the labels the query reads, and stop reading a
//!   line once they have them all; one that needs no label at all
//!   (`sum(count_over_time({…} | json [1m]))`, `absent_over_time`) skips the
//!   parsers. So a line malformed after the needed keys, or a malformed line
//!   under `sum(…)`, raises no parser error, and an error series names only
//!   the labels extracted.

use logql_parser::{LabelFilter, LabelFormatOp, Stage};

use super::label_filter::LabelPred;
use super::labels::{Category, ERROR, EXTRACTED, LabelsBuilder, PRESERVE_ERROR};
use go::template::Template;

/// How a metric query's range aggregation groups its samples, as Loki's
/// sample extractor sees it when it builds the hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricGrouping<'a> {
    /// No grouping, or `without (…)`: every label is extracted.
    All,
    /// `by (…)` with these labels (never empty).
    By(&'a [String]),
    /// `by ()`, a parent `sum` without grouping, or `absent_over_time`.
    Nothing,
}

/// The hints of a pipeline.
#[derive(Debug, Default)]
pub struct Hints {
    filters: Vec<(String, LabelPred)>,
    /// The only labels parsers extract; empty means every label.
    required: Vec<String>,
    /// Parsers do not run at all.
    no_labels: bool,
}

fn single_label(f: &LabelFilter) -> Option<&str> {
    match f {
        LabelFilter::And(..) | LabelFilter::Or(..) => None,
        LabelFilter::Paren(inner) => single_label(inner),
        LabelFilter::Matcher(m) => Some(&m.name),
        LabelFilter::Number { name, .. }
        | LabelFilter::Duration { name, .. }
        | LabelFilter::Bytes { name, .. }
        | LabelFilter::Ip { name, .. } => Some(name),
    }
}

fn filter_names(f: &LabelFilter, out: &mut Vec<String>) {
    match f {
        LabelFilter::And(a, b) | LabelFilter::Or(a, b) => {
            filter_names(a, out);
            filter_names(b, out);
        }
        LabelFilter::Paren(inner) => filter_names(inner, out),
        _ => out.extend(single_label(f).map(str::to_owned)),
    }
}

/// The labels a stage reads (Loki's `RequiredLabelNames`).
fn stage_names(stage: &Stage, out: &mut Vec<String>) -> Result<(), String> {
    let template_fields = |text: &str, out: &mut Vec<String>| -> Result<(), String> {
        let t = Template::parse(text).map_err(|e| e.to_string())?;
        out.extend(t.fields());
        Ok(())
    };
    match stage {
        Stage::LabelFilter(f) => filter_names(f, out),
        Stage::LineFormat(t) => template_fields(t, out)?,
        Stage::LabelFormat(ops) => {
            for op in ops {
                match op {
                    LabelFormatOp::Rename { src, .. } => out.push(src.clone()),
                    LabelFormatOp::Template { template, .. } => template_fields(template, out)?,
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Loki's `appendLabelHints`: a name ending in `_extracted` also names
/// the label without the suffix.
fn push_hint(out: &mut Vec<String>, name: &str) {
    for n in [Some(name), name.strip_suffix(EXTRACTED)]
        .into_iter()
        .flatten()
    {
        if !out.iter().any(|h| h == n) {
            out.push(n.to_owned());
        }
    }
}

/// The label filter stages of `stages`, in order.
fn label_filters(stages: &[Stage]) -> Vec<&LabelFilter> {
    stages
        .iter()
        .filter_map(|s| match s {
            Stage::LabelFilter(f) => Some(f),
            _ => None,
        })
        .collect()
}

fn compile(filters: &[&LabelFilter]) -> Result<Vec<(String, LabelPred)>, String> {
    let mut out = Vec::new();
    for f in filters {
        if let Some(name) = single_label(f) {
            out.push((name.to_owned(), LabelPred::new(f)?));
        }
    }
    Ok(out)
}

impl Hints {
    /// The hint filters of a log query's `stages`.
    ///
    /// # Errors
    /// A filter that does not compile.
    pub fn new(stages: &[Stage]) -> Result<Self, String> {
        let filters = label_filters(stages);
        Ok(Self {
            filters: compile(&filters)?,
            ..Self::default()
        })
    }

    /// The hints Loki's sample extractor builds for a range aggregation over
    /// `stages`, with `post` the filters after `unwrap` and `unwrap` the
    /// unwrapped label.
    ///
    /// # Errors
    /// A filter or template that does not compile.
    pub fn for_metric(
        stages: &[Stage],
        post: &[LabelFilter],
        grouping: MetricGrouping<'_>,
        unwrap: Option<&str>,
    ) -> Result<Self, String> {
        let mut names = Vec::new();
        for s in stages {
            stage_names(s, &mut names)?;
        }
        for f in post {
            filter_names(f, &mut names);
        }
        let mut required = Vec::new();
        let groups = match grouping {
            MetricGrouping::By(g) => g,
            _ => &[],
        };
        for n in names.iter().chain(groups).map(String::as_str).chain(unwrap) {
            push_hint(&mut required, n);
        }
        // Loki adds the post-unwrap filters as one more stage: a single
        // filter is a hint filter, several are one `and` (never one).
        let mut filters = label_filters(stages);
        if let [one] = post {
            filters.push(one);
        }
        Ok(match grouping {
            MetricGrouping::Nothing if required.is_empty() => Self {
                no_labels: true,
                ..Self::default()
            },
            MetricGrouping::Nothing => Self {
                filters: compile(&filters)?,
                required,
                no_labels: false,
            },
            MetricGrouping::All => Self {
                filters: compile(&filters)?,
                ..Self::default()
            },
            MetricGrouping::By(_) => Self {
                required,
                ..Self::default()
            },
        })
    }

    /// Whether parsing may go on after a parser set `name`
    /// (Loki's `ShouldContinueParsingLine`).
    pub fn keep(&self, name: &str, lbs: &mut LabelsBuilder) -> bool {
        match self.filters.iter().find(|(n, _)| n == name) {
            Some((_, f)) => f.eval(lbs),
            None => true,
        }
    }

    /// Whether parsers extract only some labels (a grouped metric query).
    pub fn requires(&self) -> bool {
        !self.required.is_empty()
    }

    /// Whether a parser sets `name` at all (Loki's `ShouldExtract`).
    pub fn extract(&self, name: &str) -> bool {
        self.required.is_empty() || self.required.iter().any(|r| r == name)
    }

    /// Whether a nested JSON object under `prefix` may hold a wanted label
    /// (Loki's `ShouldExtractPrefix`).
    pub fn extract_prefix(&self, prefix: &str) -> bool {
        self.required.is_empty() || self.required.iter().any(|r| r.starts_with(prefix))
    }

    /// Whether every required label has been parsed from this line, so a
    /// parser stops reading it (Loki's `AllRequiredExtracted`).
    pub fn all_extracted(&self, lbs: &LabelsBuilder) -> bool {
        !self.required.is_empty() && self.required.iter().all(|r| lbs.extracted(r))
    }

    /// Whether parsers skip the line (Loki's `NoLabels`).
    pub fn skip(&self, lbs: &LabelsBuilder) -> bool {
        self.no_labels || self.all_extracted(lbs)
    }

    /// After a parser set an error: Loki's `addErrLabel` also marks the
    /// entry `__preserve_error__="true"` when the error was asked for.
    pub fn mark_error(&self, lbs: &mut LabelsBuilder) {
        if self.preserve_error() {
            lbs.set(Category::Parsed, PRESERVE_ERROR, "true");
        }
    }

    /// Whether `__error__` is required (grouped on or filtered): parser
    /// errors then mark the entry `__preserve_error__="true"` and do not
    /// fail a metric query (Loki's `PreserveError`).
    pub fn preserve_error(&self) -> bool {
        self.required.iter().any(|r| r == ERROR)
    }
}

#[cfg(test)]
mod tests {
    use logql_parser::{Expr, MetricExpr};

    use super::*;

    fn range_stages(q: &str) -> Vec<Stage> {
        let Ok(Expr::Metric(MetricExpr::RangeAggregation(r))) = logql_parser::parse(q) else {
            panic!("not a range aggregation: {q}")
        };
        r.range.log.pipeline.clone()
    }

    #[test]
    fn grouped_metrics_require_the_groups_the_filters_and_templates() {
        let stages = range_stages(
            r#"count_over_time({a="b"} | json | status >= 500 | line_format "{{.msg}} {{if .ok}}{{.user.name}}{{end}}" | label_format x=y [1m])"#,
        );
        let groups = ["level".to_owned(), "app_extracted".to_owned()];
        let h = Hints::for_metric(&stages, &[], MetricGrouping::By(&groups), Some("size")).unwrap();
        for n in [
            "status",
            "msg",
            "ok",
            "user",
            "name",
            "y",
            "level",
            "app",
            "app_extracted",
            "size",
        ] {
            assert!(h.extract(n), "{n}");
        }
        assert!(!h.extract("other"));
        assert!(h.extract_prefix("app"));
        assert!(!h.extract_prefix("zz"));
        assert!(!h.skip(&LabelsBuilder::new()));
        // Grouped: no hint filters (Loki drops them in this case).
        assert!(h.filters.is_empty());
    }

    #[test]
    fn a_metric_reading_no_label_skips_the_parsers() {
        let stages = range_stages(r#"count_over_time({a="b"} | json [1m])"#);
        let h = Hints::for_metric(&stages, &[], MetricGrouping::Nothing, None).unwrap();
        assert!(h.skip(&LabelsBuilder::new()));
        // A filter's label is required even then.
        let stages = range_stages(r#"count_over_time({a="b"} | json | level="x" [1m])"#);
        let h = Hints::for_metric(&stages, &[], MetricGrouping::Nothing, None).unwrap();
        assert!(!h.skip(&LabelsBuilder::new()));
        assert!(h.extract("level") && !h.extract("msg"));
        assert_eq!(h.filters.len(), 1);
        // Ungrouped: everything is extracted.
        let h = Hints::for_metric(&stages, &[], MetricGrouping::All, None).unwrap();
        assert!(h.extract("msg") && !h.skip(&LabelsBuilder::new()));
    }

    #[test]
    fn required_labels_end_parsing_once_extracted() {
        let groups = ["level".to_owned()];
        let h = Hints::for_metric(&[], &[], MetricGrouping::By(&groups), None).unwrap();
        let mut lbs = LabelsBuilder::new();
        lbs.reset([("app", "x")]);
        assert!(!h.all_extracted(&lbs));
        lbs.set(super::super::labels::Category::Parsed, "level", "info");
        assert!(h.all_extracted(&lbs) && h.skip(&lbs));
        assert!(!h.preserve_error());
        let groups = [ERROR.to_owned()];
        let h = Hints::for_metric(&[], &[], MetricGrouping::By(&groups), None).unwrap();
        assert!(h.preserve_error());
    }
}

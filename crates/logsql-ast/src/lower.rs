//! Lowering a LogQL log query into a [`LogPlan`].
//!
//! A stage goes to VictoriaLogs only when the LogsQL is exactly equivalent;
//! from the first stage that is not, that stage and every later one run in
//! the proxy ([`LogPlan::proxy_stages`]), with one exception: a line filter
//! that reads the original line (no `line_format`, `decolorize` or `unpack`
//! before it) commutes with every other stage, so it is hoisted into the
//! VictoriaLogs filter wherever it is written.
//!
//! Parsers of log queries always run in the proxy (metric queries may run
//! `| json` in VictoriaLogs behind a guard: `crate::metric::parsed`). VictoriaLogs' `unpack_json` and
//! `unpack_logfmt` differ from Loki's parsers where answers show it: Loki
//! keeps a line that fails to parse and tags it `__error__=JSONParserErr`
//! (with the parser's message in `__error_details__`), skips `null` and array
//! values, sanitises keys (`a-b` → `a_b`, a leading digit gets `_`), renames
//! a key that collides with a stream label or structured metadata to
//! `<key>_extracted`, and its logfmt decoder keeps bare keys and treats
//! quotes and escapes its own way. Numeric, duration and bytes label filters
//! also run in the proxy, because Loki keeps an entry whose value fails to
//! convert (tagging it `__error__=LabelFilterErr`) where VictoriaLogs drops it.

mod cheap_class;
pub(crate) mod discovery;
mod label;
mod line;
pub(crate) mod logfmt_guard;
mod needle;
mod selector;

use logql_parser::{
    LabelFilter, LabelSelector, LineFilter, LineFilterOp, LineFilterValue, LogExpr, Parser,
    Selector, Stage,
};

pub use self::discovery::Discovery;
use crate::error::LowerError;
use crate::filter::Filter;
use crate::plan::LogPlan;
use crate::query::Query;

/// Lowers a LogQL log query into a plan whose selectors and label filters
/// see the labels `discovery` synthesizes (Loki's `service_name` and
/// `detected_level`). Label filters on a synthesized label run in the proxy,
/// which derives it per entry; the plan records `discovery` for that.
///
/// There is no variant without `discovery`: the settings change answers,
/// so every caller states them ([`Discovery::default`] synthesizes nothing).
///
/// # Errors
/// [`LowerError::Unsupported`] for a `service_name` regex that does not
/// compile (every stage can run in the proxy, so nothing else is refused
/// today; kept so callers handle future refusals).
pub fn lower_log(expr: &LogExpr, discovery: &Discovery) -> Result<LogPlan, LowerError> {
    let mut top = vec![selector::lower(&expr.selector, discovery)?];
    let mut proxy: Vec<Stage> = Vec::new();
    // Whether an earlier stage may have rewritten the line.
    let mut rewritten = false;
    for stage in &loki_order(&expr.pipeline) {
        match stage {
            Stage::LineFilter(lf) if !rewritten && pushable_line(lf) => top.push(line::lower(lf)?),
            Stage::LabelFilter(lf)
                if proxy.is_empty() && pushable_label(lf) && !reads_derived(lf, discovery) =>
            {
                top.push(label::lower(lf, false)?);
            }
            // No stage before it can have set an error label, so dropping
            // them changes nothing (Drilldown's `| drop __error__, __error_details__`).
            Stage::Drop(items) if proxy.is_empty() && items.iter().all(is_error_label) => {}
            other => {
                rewritten |= rewrites_line(other);
                proxy.push(other.clone());
            }
        }
    }
    Ok(LogPlan {
        query: Query {
            filter: Filter::and(top),
            pipes: Vec::new(),
        },
        parsed_prefix: None,
        proxy_stages: proxy,
        discovery: discovery.clone(),
    })
}

/// The stage order Loki executes (its `reorderStages`): within each run of
/// stages that ends at a label filter, a `line_format` or an `unpack`, the
/// line filters move in front of the other stages. So a line filter written
/// after `| json` or `| decolorize` reads the line as it was before them,
/// while one after `line_format` or `unpack` reads the rewritten line.
pub fn loki_order(stages: &[Stage]) -> Vec<Stage> {
    let mut out = Vec::with_capacity(stages.len());
    let mut lines: Vec<&Stage> = Vec::new();
    let mut others: Vec<&Stage> = Vec::new();
    let flush = |out: &mut Vec<Stage>, lines: &mut Vec<&Stage>, others: &mut Vec<&Stage>| {
        out.extend(lines.drain(..).cloned());
        out.extend(others.drain(..).cloned());
    };
    for s in stages {
        match s {
            Stage::LabelFilter(_) => {
                flush(&mut out, &mut lines, &mut others);
                out.push(s.clone());
            }
            Stage::LineFilter(_) => lines.push(s),
            Stage::LineFormat(_) | Stage::Parser(Parser::Unpack) => {
                others.push(s);
                flush(&mut out, &mut lines, &mut others);
            }
            _ => others.push(s),
        }
    }
    flush(&mut out, &mut lines, &mut others);
    out
}

/// Lowers a label filter over stored fields (the parser pushdown resolves
/// each parsed label into the field of its name first).
///
/// # Errors
/// As the lowering of label filters: `ip()`, error labels, bad regexes.
pub(crate) fn label_filter(f: &LabelFilter) -> Result<Filter, LowerError> {
    label::lower(f, false)
}

/// Lowers a stream selector alone (for `/labels?query=`, `/series?match[]=`)
/// whose `service_name` matchers select on the value `discovery` derives.
///
/// # Errors
/// A `service_name` regex that does not compile.
pub fn lower_selector(selector: &Selector, discovery: &Discovery) -> Result<Query, LowerError> {
    Ok(Query::new(selector::lower(selector, discovery)?))
}

/// Whether a label filter reads a label the proxy derives per entry: one
/// `discovery` synthesizes, or OTel severity metadata, which VictoriaLogs
/// stores in other fields and forms ([`crate::otel::loki_severity`]).
fn reads_derived(lf: &LabelFilter, discovery: &Discovery) -> bool {
    let derived = |name: &str| discovery.synthesizes(name) || crate::otel::is_severity(name);
    match lf {
        LabelFilter::And(a, b) | LabelFilter::Or(a, b) => {
            reads_derived(a, discovery) || reads_derived(b, discovery)
        }
        LabelFilter::Paren(inner) => reads_derived(inner, discovery),
        LabelFilter::Matcher(m) => derived(&m.name),
        LabelFilter::Number { name, .. }
        | LabelFilter::Duration { name, .. }
        | LabelFilter::Bytes { name, .. }
        | LabelFilter::Ip { name, .. } => derived(name),
    }
}

pub(crate) fn is_error_label(item: &LabelSelector) -> bool {
    matches!(item, LabelSelector::Name(n) if n == "__error__" || n == "__error_details__")
}

/// Whether a stage can change the line later stages see.
fn rewrites_line(stage: &Stage) -> bool {
    matches!(
        stage,
        Stage::LineFormat(_) | Stage::Decolorize | Stage::Parser(Parser::Unpack)
    )
}

/// Line filters VictoriaLogs evaluates exactly: substring and regex ones.
/// `ip()` and pattern filters (`|>`, `!>`) run in the proxy.
fn pushable_line(lf: &LineFilter) -> bool {
    !matches!(lf.op, LineFilterOp::Pattern | LineFilterOp::NotPattern)
        && lf
            .values
            .iter()
            .all(|v| matches!(v, LineFilterValue::Literal(_)))
}

/// Label filters VictoriaLogs evaluates exactly over stored fields: string
/// matchers (combined with `and`/`or`) on labels other than the error labels.
/// Numeric, duration, bytes and `ip()` comparisons run in the proxy.
fn pushable_label(lf: &LabelFilter) -> bool {
    match lf {
        LabelFilter::And(a, b) | LabelFilter::Or(a, b) => pushable_label(a) && pushable_label(b),
        LabelFilter::Paren(inner) => pushable_label(inner),
        LabelFilter::Matcher(m) => m.name != "__error__" && m.name != "__error_details__",
        LabelFilter::Number { .. }
        | LabelFilter::Duration { .. }
        | LabelFilter::Bytes { .. }
        | LabelFilter::Ip { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use logql_parser::{
        CmpOp, LabelFilter, LineFilter, LineFilterOp, LineFilterValue, MatchOp, Matcher, Parser,
    };

    use super::*;

    fn m(name: &str, op: MatchOp, value: &str) -> Matcher {
        Matcher {
            name: name.into(),
            op,
            value: value.into(),
        }
    }

    fn expr(pipeline: Vec<Stage>) -> LogExpr {
        LogExpr {
            selector: Selector {
                matchers: vec![m("app", MatchOp::Eq, "api")],
            },
            pipeline,
        }
    }

    fn line(op: LineFilterOp, values: &[&str]) -> Stage {
        Stage::LineFilter(LineFilter {
            op,
            values: values
                .iter()
                .map(|v| LineFilterValue::Literal((*v).into()))
                .collect(),
        })
    }

    fn lowered(pipeline: Vec<Stage>) -> String {
        lower_log(&expr(pipeline), &Discovery::default())
            .unwrap()
            .query
            .to_string()
    }

    #[test]
    fn contains_is_a_quoted_substring_regex() {
        assert_eq!(
            lowered(vec![line(LineFilterOp::Contains, &["[ERROR] a.b"])]),
            r#"{app="api"} and _msg:~"\\[ERROR\\] a\\.b""#
        );
    }

    #[test]
    fn or_alternatives_and_negation() {
        assert_eq!(
            lowered(vec![line(LineFilterOp::NotContains, &["a", "b|c"])]),
            r#"{app="api"} and !_msg:~"(?:a)|(?:b\\|c)""#
        );
        assert_eq!(
            lowered(vec![line(LineFilterOp::Contains, &[""])]),
            r#"{app="api"}"#
        );
        assert_eq!(
            lowered(vec![line(LineFilterOp::Contains, &["", "x"])]),
            r#"{app="api"} and _msg:~"x""#
        );
        assert_eq!(lowered(vec![line(LineFilterOp::NotContains, &[""])]), "!*");
    }

    fn plan(pipeline: Vec<Stage>) -> LogPlan {
        lower_log(&expr(pipeline), &Discovery::default()).unwrap()
    }

    #[test]
    fn parsers_and_everything_after_run_in_the_proxy() {
        let json = Stage::Parser(Parser::Json(vec![]));
        let lf = Stage::LabelFilter(LabelFilter::Matcher(m("x", MatchOp::Eq, "v")));
        let p = plan(vec![json.clone(), lf.clone()]);
        assert_eq!(p.query.to_string(), r#"{app="api"}"#);
        assert_eq!(p.parsed_prefix, None);
        assert_eq!(p.proxy_stages, vec![json, lf]);
        assert!(p.has_proxy_stages());
    }

    #[test]
    fn line_filters_are_hoisted_until_the_line_is_rewritten() {
        let json = Stage::Parser(Parser::Json(vec![]));
        let fmt = Stage::LineFormat("{{.a}}".into());
        let p = plan(vec![
            json.clone(),
            line(LineFilterOp::Contains, &["a"]),
            fmt.clone(),
            line(LineFilterOp::Contains, &["b"]),
        ]);
        assert_eq!(p.query.to_string(), r#"{app="api"} and _msg:~"a""#);
        assert_eq!(
            p.proxy_stages,
            vec![json, fmt, line(LineFilterOp::Contains, &["b"])]
        );
        let unpack = Stage::Parser(Parser::Unpack);
        let p = plan(vec![unpack.clone(), line(LineFilterOp::Contains, &["a"])]);
        assert_eq!(p.query.to_string(), r#"{app="api"}"#);
        assert_eq!(p.proxy_stages.len(), 2);
    }

    #[test]
    fn loki_moves_line_filters_before_parsers_and_decolorize() {
        let json = Stage::Parser(Parser::Json(vec![]));
        let deco = Stage::Decolorize;
        let lf = Stage::LabelFilter(LabelFilter::Matcher(m("x", MatchOp::Eq, "v")));
        let a = line(LineFilterOp::Contains, &["a"]);
        let b = line(LineFilterOp::Contains, &["b"]);
        assert_eq!(
            loki_order(&[
                json.clone(),
                deco.clone(),
                a.clone(),
                lf.clone(),
                deco.clone(),
                b.clone()
            ]),
            vec![
                a.clone(),
                json.clone(),
                deco.clone(),
                lf.clone(),
                b.clone(),
                deco.clone()
            ]
        );
        // `| decolorize |= "a"` filters the coloured line, in VictoriaLogs.
        let p = plan(vec![deco.clone(), a.clone()]);
        assert_eq!(p.query.to_string(), r#"{app="api"} and _msg:~"a""#);
        assert_eq!(p.proxy_stages, vec![deco.clone()]);
        // After a label filter, a decolorized line is read, in the proxy.
        let p = plan(vec![json.clone(), deco.clone(), lf.clone(), b.clone()]);
        assert_eq!(p.proxy_stages, vec![json, deco, lf, b]);
    }

    #[test]
    fn pattern_and_ip_line_filters_run_in_the_proxy() {
        let pat = line(LineFilterOp::Pattern, &["<_> x"]);
        let ip = Stage::LineFilter(LineFilter {
            op: LineFilterOp::Contains,
            values: vec![LineFilterValue::Ip("10.0.0.0/8".into())],
        });
        let p = plan(vec![
            pat.clone(),
            ip.clone(),
            line(LineFilterOp::Regex, &["y"]),
        ]);
        assert_eq!(p.query.to_string(), r#"{app="api"} and _msg:~"y""#);
        assert_eq!(p.proxy_stages, vec![pat, ip]);
    }

    #[test]
    fn string_label_filters_before_any_proxy_stage_go_to_victorialogs() {
        let p = plan(vec![Stage::LabelFilter(LabelFilter::Matcher(m(
            "level",
            MatchOp::Eq,
            "abc",
        )))]);
        assert_eq!(p.query.to_string(), r#"{app="api"} and "level":="abc""#);
        assert!(p.proxy_stages.is_empty());
    }

    #[test]
    fn otel_label_filters() {
        // An index label reads the label or its attribute, no other spelling.
        let p = plan(vec![Stage::LabelFilter(LabelFilter::Matcher(m(
            "k8s_pod_name",
            MatchOp::Eq,
            "p",
        )))]);
        assert_eq!(
            p.query.to_string(),
            r#"{app="api"} and ("k8s_pod_name":="p" or ("k8s_pod_name":"" and "k8s.pod.name":="p"))"#
        );
        // Severity is stored in other forms: translated and filtered in the proxy.
        let sev = Stage::LabelFilter(LabelFilter::Matcher(m(
            "severity_text",
            MatchOp::Eq,
            "ERROR",
        )));
        let p = plan(vec![sev.clone()]);
        assert_eq!(p.query.to_string(), r#"{app="api"}"#);
        assert_eq!(p.proxy_stages, vec![sev]);
    }

    #[test]
    fn numeric_label_filters_run_in_the_proxy() {
        // Loki keeps an entry whose value is not a number (tagged LabelFilterErr).
        let num = Stage::LabelFilter(LabelFilter::Number {
            name: "status".into(),
            op: CmpOp::Ge,
            value: 500.0,
        });
        let p = plan(vec![num.clone()]);
        assert_eq!(p.query.to_string(), r#"{app="api"}"#);
        assert_eq!(p.proxy_stages, vec![num]);
        let err = Stage::LabelFilter(LabelFilter::Matcher(m("__error__", MatchOp::Eq, "")));
        assert_eq!(plan(vec![err.clone()]).proxy_stages, vec![err]);
    }

    #[test]
    fn dropping_error_labels_first_is_a_no_op() {
        let drop = Stage::Drop(vec![
            LabelSelector::Name("__error__".into()),
            LabelSelector::Name("__error_details__".into()),
        ]);
        assert!(plan(vec![drop.clone()]).proxy_stages.is_empty());
        let json = Stage::Parser(Parser::Json(vec![]));
        assert_eq!(
            plan(vec![json.clone(), drop.clone()]).proxy_stages,
            vec![json, drop]
        );
        let other = Stage::Drop(vec![LabelSelector::Name("level".into())]);
        assert_eq!(plan(vec![other.clone()]).proxy_stages, vec![other]);
    }

    #[test]
    fn label_filter_after_a_proxy_stage_stays_in_the_proxy() {
        let fmt = Stage::LabelFormat(vec![]);
        let lf = Stage::LabelFilter(LabelFilter::Matcher(m("x", MatchOp::Eq, "v")));
        assert_eq!(
            plan(vec![fmt.clone(), lf.clone()]).proxy_stages,
            vec![fmt, lf]
        );
    }

    #[test]
    fn selector_alone() {
        let q = lower_selector(
            &Selector {
                matchers: vec![m("a", MatchOp::Re, "x|y"), m("b", MatchOp::Neq, "")],
            },
            &Discovery::default(),
        )
        .unwrap();
        assert_eq!(q.to_string(), r#"{a=~"x|y", b!=""}"#);
        assert_eq!(
            lower_selector(&Selector { matchers: vec![] }, &Discovery::default())
                .unwrap()
                .to_string(),
            "*"
        );
    }
}

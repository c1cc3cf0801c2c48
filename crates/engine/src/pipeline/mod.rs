//! Proxy-side evaluation of the LogQL stages VictoriaLogs cannot compute
//! exactly ([`logsql_ast::LogPlan::proxy_stages`]), with Loki's semantics.
//!
//! A [`Pipeline`] is compiled once per query and run once per decoded row:
//! [`Pipeline::process`] resets the reused [`LabelsBuilder`] to the row's
//! stream labels and structured metadata, runs the stages in order, and
//! leaves the (possibly rewritten) line and the labels in the pipeline for
//! the caller to read. Nothing is allocated per row once the buffers have
//! grown, except for labels whose values must be unescaped.

pub mod format;
pub mod hints;
pub mod ip;
pub mod json;
pub mod json_scan;
pub mod label_filter;
pub mod labels;
pub mod line_filter;
pub mod logfmt;
pub mod pattern;
pub mod regexp;
pub mod validate;

use std::borrow::Cow;

use logql_parser::{LabelSelector, Parser, Stage};
use regex::Regex;

use self::format::{LabelFormat, LineFormat};
use self::hints::Hints;
use self::json::{JsonExpressionParser, JsonParser};
use self::label_filter::{LabelPred, StrMatcher};
use self::labels::{ERROR, ERROR_DETAILS, LabelsBuilder};
use self::line_filter::LineFilterStep;
use self::logfmt::LogfmtParser;
use self::pattern::Pattern;
use self::regexp::RegexpParser;

/// Why a pipeline could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError {
    /// The query is invalid the way Loki reports it (a 400).
    #[error("{0}")]
    Invalid(String),
}

/// Loki's pattern for ANSI escape sequences (`decolorize`), with ASCII `\d`.
const ANSI_PATTERN: &str = "[\u{1B}\u{9B}][\\[\\]()#;?]*(?:(?:(?:[a-zA-Z0-9]*(?:;[a-zA-Z0-9]*)*)?\u{07})|(?:(?:[0-9]{1,4}(?:;[0-9]{0,4})*)?[0-9A-PRZcf-ntqry=><~]))";

/// The compiled ANSI regex, built once per process.
fn ansi_regex() -> Result<Regex, PipelineError> {
    static ANSI: std::sync::LazyLock<Result<Regex, regex::Error>> =
        std::sync::LazyLock::new(|| Regex::new(ANSI_PATTERN));
    ANSI.clone().map_err(|e| invalid(e.to_string()))
}

/// An item of `drop`/`keep`.
#[derive(Debug, Clone)]
enum Item {
    Name(String),
    Matcher(StrMatcher),
}

#[derive(Debug)]
enum Step {
    Line(LineFilterStep),
    Json(JsonParser),
    JsonExpr(JsonExpressionParser),
    Logfmt(LogfmtParser),
    Regexp(RegexpParser),
    Pattern(Pattern, Vec<String>),
    Unpack,
    Label(LabelPred),
    Drop(Vec<Item>),
    Keep(Vec<Item>),
    Decolorize(Regex),
    LineFormat(LineFormat),
    LabelFormat(LabelFormat),
}

/// A compiled list of proxy stages plus its per-row scratch state.
#[derive(Debug)]
pub struct Pipeline {
    steps: Vec<Step>,
    hints: Hints,
    lbs: LabelsBuilder,
    line: String,
    scratch: String,
    /// Labels the runner adds to each entry before the stages (Loki's
    /// ingest-time `service_name` and `detected_level`).
    discovery: logsql_ast::Discovery,
}

fn invalid(e: String) -> PipelineError {
    PipelineError::Invalid(e)
}

fn items(list: &[LabelSelector]) -> Result<Vec<Item>, PipelineError> {
    list.iter()
        .map(|i| match i {
            LabelSelector::Name(n) => Ok(Item::Name(n.clone())),
            LabelSelector::Matcher(m) => StrMatcher::new(m).map(Item::Matcher).map_err(invalid),
        })
        .collect()
}

/// The work size to schedule a run of `stages` over `input_bytes` of rows
/// by (the service's blocking pool): the input's size, except that a template
/// stage may spend up to its whole step budget on every line, so a pipeline
/// with one never runs inline on an async worker, however small its input.
pub fn work_size(stages: &[Stage], input_bytes: usize) -> usize {
    let templated = stages
        .iter()
        .any(|s| matches!(s, Stage::LineFormat(_) | Stage::LabelFormat(_)));
    if templated { usize::MAX } else { input_bytes }
}

impl Pipeline {
    /// [`work_size`] of this compiled pipeline.
    pub fn work_size(&self, input_bytes: usize) -> usize {
        let templated = self
            .steps
            .iter()
            .any(|s| matches!(s, Step::LineFormat(_) | Step::LabelFormat(_)));
        if templated { usize::MAX } else { input_bytes }
    }

    /// Compiles `stages`.
    ///
    /// # Errors
    /// [`PipelineError::Invalid`] for a bad regex, pattern, `ip()` or JSON
    /// path or template.
    pub fn new(stages: &[Stage]) -> Result<Self, PipelineError> {
        let mut steps = Vec::with_capacity(stages.len());
        for s in stages {
            steps.push(match s {
                Stage::LineFilter(f) => Step::Line(LineFilterStep::new(f).map_err(invalid)?),
                Stage::Parser(Parser::Json(ex)) if ex.is_empty() => {
                    Step::Json(JsonParser::default())
                }
                Stage::Parser(Parser::Json(ex)) => {
                    let mut exprs = Vec::with_capacity(ex.len());
                    for e in ex {
                        let path = json::parse_path(e.expr.as_deref().unwrap_or(&e.name))
                            .map_err(invalid)?;
                        exprs.push((e.name.clone(), path));
                    }
                    Step::JsonExpr(JsonExpressionParser::new(exprs))
                }
                Stage::Parser(Parser::Logfmt {
                    strict,
                    keep_empty,
                    extractions,
                }) => Step::Logfmt(LogfmtParser::new(
                    *strict,
                    *keep_empty,
                    extractions
                        .iter()
                        .map(|e| {
                            (
                                e.name.clone(),
                                e.expr.clone().unwrap_or_else(|| e.name.clone()),
                            )
                        })
                        .collect(),
                )),
                Stage::Parser(Parser::Regexp(re)) => {
                    Step::Regexp(RegexpParser::new(re).map_err(invalid)?)
                }
                Stage::Parser(Parser::Pattern(p)) => {
                    let pat = Pattern::parse(p, false).map_err(invalid)?;
                    let names = pat.names().map(str::to_owned).collect();
                    Step::Pattern(pat, names)
                }
                Stage::Parser(Parser::Unpack) => Step::Unpack,
                Stage::LabelFilter(f) => Step::Label(LabelPred::new(f).map_err(invalid)?),
                Stage::Drop(list) => Step::Drop(items(list)?),
                Stage::Keep(list) => Step::Keep(items(list)?),
                Stage::Decolorize => Step::Decolorize(ansi_regex()?),
                Stage::LineFormat(t) => Step::LineFormat(LineFormat::new(t)?),
                Stage::LabelFormat(ops) => Step::LabelFormat(LabelFormat::new(ops)?),
            });
        }
        Ok(Self {
            steps,
            hints: Hints::new(stages).map_err(invalid)?,
            lbs: LabelsBuilder::new(),
            line: String::new(),
            scratch: String::new(),
            discovery: logsql_ast::Discovery::default(),
        })
    }

    /// A pipeline without stages: what stays behind while a compiled one is
    /// moved to a blocking job.
    pub fn empty() -> Self {
        Self {
            steps: Vec::new(),
            hints: Hints::default(),
            lbs: LabelsBuilder::new(),
            line: String::new(),
            scratch: String::new(),
            discovery: logsql_ast::Discovery::default(),
        }
    }

    /// The pipeline of a plan lowered with `discovery`: the runner adds the
    /// labels it synthesizes to every entry ([`Pipeline::discovery`]).
    #[must_use]
    pub fn discovering(mut self, discovery: logsql_ast::Discovery) -> Self {
        self.discovery = discovery;
        self
    }

    /// Replaces the parser hints (a metric query's: [`Hints::for_metric`]).
    #[must_use]
    pub fn with_hints(mut self, hints: Hints) -> Self {
        self.hints = hints;
        self
    }

    /// The labels synthesized for each entry before the stages run.
    pub fn discovery(&self) -> &logsql_ast::Discovery {
        &self.discovery
    }

    /// Runs the stages over one entry. `stream` and `metadata` carry Loki
    /// label names (see [`crate::labels::sanitize_label_name`]). Returns whether the entry is kept;
    /// then [`Pipeline::line`] and [`Pipeline::labels`] describe it.
    pub fn process<'a>(
        &mut self,
        ts_ns: i64,
        line: &str,
        stream: impl IntoIterator<Item = (&'a str, &'a str)>,
        metadata: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> bool {
        self.lbs.reset(stream);
        for (k, v) in metadata {
            self.lbs.add_metadata(k, v);
        }
        self.line.clear();
        self.line.push_str(line);
        for step in &mut self.steps {
            let lbs = &mut self.lbs;
            match step {
                Step::Line(f) => {
                    if !f.keep(&self.line) {
                        return false;
                    }
                }
                Step::Json(p) => {
                    if !p.process(&self.line, lbs, &self.hints) {
                        return false;
                    }
                }
                Step::JsonExpr(p) => {
                    if !self.hints.skip(lbs) {
                        let had_error = !lbs.err().is_empty();
                        p.process(&self.line, lbs);
                        if !had_error && !lbs.err().is_empty() {
                            self.hints.mark_error(lbs);
                        }
                    }
                }
                Step::Logfmt(p) => {
                    if !p.process(&self.line, lbs, &self.hints) {
                        return false;
                    }
                }
                Step::Regexp(p) => {
                    if !p.process(&self.line, lbs, &self.hints) {
                        return false;
                    }
                }
                Step::Pattern(_, _) if self.hints.skip(lbs) => {}
                Step::Pattern(p, names) => {
                    let mut caps = Vec::new();
                    p.captures(&self.line, &mut caps);
                    for (name, value) in names.iter().zip(caps) {
                        self.scratch.clear();
                        self.scratch.push_str(name);
                        if lbs.collides(name) {
                            self.scratch.push_str(labels::EXTRACTED);
                        }
                        if lbs.extracted(&self.scratch) || !self.hints.extract(&self.scratch) {
                            continue;
                        }
                        lbs.set(labels::Category::Parsed, &self.scratch, value);
                        if !self.hints.keep(&self.scratch, lbs) {
                            return false;
                        }
                    }
                }
                Step::Unpack => {
                    let mut drop = false;
                    if let Some(entry) = json::unpack(&self.line, lbs, &self.hints, &mut drop) {
                        self.line = entry;
                    }
                    if drop {
                        return false;
                    }
                }
                Step::Label(p) => {
                    if !p.eval(lbs) {
                        return false;
                    }
                }
                Step::Drop(list) => drop_labels(list, lbs),
                Step::Keep(list) => keep_labels(list, lbs),
                Step::LineFormat(f) => f.process(ts_ns, &mut self.line, lbs),
                Step::LabelFormat(f) => f.process(ts_ns, &self.line, lbs),
                Step::Decolorize(re) => {
                    if let Cow::Owned(s) = re.replace_all(&self.line, "") {
                        self.line = s;
                    }
                }
            }
        }
        true
    }

    /// The entry's line after the stages.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// The entry's labels after the stages.
    pub fn labels(&self) -> &LabelsBuilder {
        &self.lbs
    }
}

fn drop_labels(list: &[Item], lbs: &mut LabelsBuilder) {
    for item in list {
        match item {
            Item::Name(n) if n == ERROR => lbs.reset_err(),
            Item::Name(n) if n == ERROR_DETAILS => lbs.reset_err_details(),
            Item::Name(n) => {
                if lbs.get(n).is_some() {
                    lbs.del(n);
                }
            }
            Item::Matcher(m) if m.name == ERROR => {
                if m.matches(lbs.err()) {
                    lbs.reset_err();
                }
            }
            Item::Matcher(m) if m.name == ERROR_DETAILS => {
                if m.matches(lbs.err_details()) {
                    lbs.reset_err_details();
                }
            }
            Item::Matcher(m) => {
                if m.matches(lbs.value(&m.name)) {
                    lbs.del(&m.name);
                }
            }
        }
    }
}

fn keep_labels(list: &[Item], lbs: &mut LabelsBuilder) {
    if list.is_empty() {
        return;
    }
    let mut remove: Vec<String> = Vec::new();
    lbs.for_each(|name, value, _| {
        if name == ERROR || name == ERROR_DETAILS || name == "__preserve_error__" {
            return;
        }
        let keep = list.iter().any(|k| match k {
            Item::Name(n) => n == name,
            Item::Matcher(m) => m.name == name && m.matches(value),
        });
        if !keep {
            remove.push(name.to_owned());
        }
    });
    for n in &remove {
        lbs.del(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use labels::Category;

    type Labels = Vec<(String, String, Category)>;

    fn run(query: &str, line: &str) -> Option<(String, Labels)> {
        let logql_parser::Expr::Log(e) = logql_parser::parse(query).unwrap() else {
            panic!("log query");
        };
        let mut p = Pipeline::new(&e.pipeline).unwrap();
        if !p.process(0, line, [("app", "api")], [("trace_id", "t1")]) {
            return None;
        }
        let mut v = Vec::new();
        p.labels()
            .for_each(|n, val, c| v.push((n.to_owned(), val.to_owned(), c)));
        v.sort();
        Some((p.line().to_owned(), v))
    }

    /// A template may spend its whole step budget on each line: such a
    /// pipeline is never small enough to run on an async worker.
    #[test]
    fn template_stages_never_run_inline() {
        for (q, templated) in [
            (r#"{app="a"} | json | level="error""#, false),
            (r#"{app="a"} | line_format "{{.msg}}""#, true),
            (r#"{app="a"} | label_format x="{{.y}}""#, true),
        ] {
            let logql_parser::Expr::Log(e) = logql_parser::parse(q).unwrap() else {
                panic!("log query");
            };
            let want = if templated { usize::MAX } else { 100 };
            assert_eq!(work_size(&e.pipeline, 100), want, "{q}");
            let p = Pipeline::new(&e.pipeline).unwrap();
            assert_eq!(p.work_size(100), want, "{q}");
        }
    }

    fn l(n: &str, v: &str, c: Category) -> (String, String, Category) {
        (n.into(), v.into(), c)
    }

    #[test]
    fn json_then_filters() {
        let (line, labels) = run(
            r#"{app="api"} | json | level="error" | status >= 500"#,
            r#"{"level":"error","status":503}"#,
        )
        .unwrap();
        assert_eq!(line, r#"{"level":"error","status":503}"#);
        assert_eq!(
            labels,
            vec![
                l("app", "api", Category::Stream),
                l("level", "error", Category::Parsed),
                l("status", "503", Category::Parsed),
                l("trace_id", "t1", Category::Metadata),
            ]
        );
        assert!(run(r#"{app="api"} | json | status >= 500"#, r#"{"status":200}"#).is_none());
    }

    #[test]
    fn parse_errors_are_kept_until_filtered() {
        // A numeric filter on a missing label drops the entry, error or not.
        assert!(run(r#"{app="api"} | json | status > 1"#, "not json").is_none());
        let (_, labels) = run(r#"{app="api"} | json"#, "not json").unwrap();
        assert!(labels.contains(&l("__error__", "JSONParserErr", Category::Parsed)));
        assert!(run(r#"{app="api"} | json | __error__="""#, "not json").is_none());
        let (_, labels) = run(
            r#"{app="api"} | json | drop __error__, __error_details__"#,
            "not json",
        )
        .unwrap();
        assert_eq!(labels.len(), 2);
    }

    #[test]
    fn drop_keep_decolorize_unpack() {
        let (_, labels) = run(
            r#"{app="api"} | logfmt | keep level, app"#,
            "level=info msg=hi",
        )
        .unwrap();
        assert_eq!(
            labels,
            vec![
                l("app", "api", Category::Stream),
                l("level", "info", Category::Parsed)
            ]
        );
        let (_, labels) = run(
            r#"{app="api"} | logfmt | drop msg, level="x", trace_id"#,
            "level=info msg=hi",
        )
        .unwrap();
        assert_eq!(
            labels,
            vec![
                l("app", "api", Category::Stream),
                l("level", "info", Category::Parsed)
            ]
        );
        let (line, _) = run(r#"{app="api"} | decolorize"#, "\u{1b}[31mred\u{1b}[0m ok").unwrap();
        assert_eq!(line, "red ok");
        let (line, _) = run(
            r#"{app="api"} | unpack |= "inner""#,
            r#"{"_entry":"the inner line","pod":"p1"}"#,
        )
        .unwrap();
        assert_eq!(line, "the inner line");
    }

    #[test]
    fn parser_hints_and_first_parser_wins() {
        // Loki evaluates `level="ERROR"` when logfmt sets level=error and
        // drops the line, although label_format would have made it match.
        let q = r#"{app="api"} | logfmt | label_format level=`{{ToUpper .level}}` | level="ERROR""#;
        assert!(run(q, "level=error").is_none());
        let q = r#"{app="api"} | logfmt | label_format lvl=`{{ToUpper .level}}` | lvl="ERROR""#;
        assert!(run(q, "level=error").is_some());
        // A key already extracted is left alone by later parsers.
        let (_, labels) = run(r#"{app="api"} | json | logfmt"#, r#"{"level":"a"}"#).unwrap();
        assert!(labels.contains(&l("level", "a", Category::Parsed)));
        let (_, labels) = run(r#"{app="api"} | logfmt"#, "level=a level=b").unwrap();
        assert!(labels.contains(&l("level", "a", Category::Parsed)));
    }

    #[test]
    fn line_format_single_field_reads_error_labels_and_missing_as_empty() {
        let (line, _) = run(
            r#"{app="api"} | json | line_format "{{.__error__}}""#,
            "not json",
        )
        .unwrap();
        assert_eq!(line, "JSONParserErr");
        let (line, _) = run(
            r#"{app="api"} | json | line_format "{{.nope}}""#,
            r#"{"a":"b"}"#,
        )
        .unwrap();
        assert_eq!(line, "");
        let (line, _) = run(
            r#"{app="api"} | json | line_format "{{.a}}""#,
            r#"{"a":"b\u00e9"}"#,
        )
        .unwrap();
        assert_eq!(line, "bé");
    }

    #[test]
    fn pattern_and_regexp_parsers() {
        let (_, labels) = run(
            r#"{app="api"} | pattern "<method> <path> <_>" | method="GET""#,
            "GET /a 200",
        )
        .unwrap();
        assert!(labels.contains(&l("path", "/a", Category::Parsed)));
        let (_, labels) = run(
            r#"{app="api"} | regexp "(?P<app>\\w+) (?P<code>\\d+)""#,
            "web 404",
        )
        .unwrap();
        assert!(labels.contains(&l("app_extracted", "web", Category::Parsed)));
        assert!(labels.contains(&l("code", "404", Category::Parsed)));
    }
}

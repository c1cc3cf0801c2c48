//! Tests against outputs recorded from Loki's own formatter.

use super::{Context, Template, TemplateError};

mod limits;
mod oracle_cases;
mod oracle_cases2;

/// What Loki does with a template on the shared context.
#[derive(Debug)]
pub(super) enum Want {
    /// Renders this line.
    Out(&'static str),
    /// Fails at runtime with this `__error_details__`.
    Exec(&'static str),
    /// Rejects the query with this Go parse error (after `invalid line template: `).
    Parse(&'static str),
}

/// A label map plus line and timestamp, like Loki's `LabelsBuilder.Map()`.
pub(super) struct MapCtx {
    pub labels: Vec<(&'static str, &'static str)>,
    pub line: &'static str,
    pub ts: i64,
}

impl Context for MapCtx {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
    fn line(&self) -> &str {
        self.line
    }
    fn timestamp_ns(&self) -> i64 {
        self.ts
    }
    fn for_each_label(&self, f: &mut dyn FnMut(&str, &str)) {
        for (k, v) in &self.labels {
            f(k, v);
        }
    }
}

fn ctx_of(labels: &[(&'static str, &'static str)], line: &'static str, ts: i64) -> MapCtx {
    MapCtx {
        labels: labels.to_vec(),
        line,
        ts,
    }
}

fn run(t: &str, ctx: &MapCtx) -> Result<String, TemplateError> {
    let tpl = Template::parse(t)?;
    let mut out = String::new();
    tpl.render(ctx, &mut out)?;
    Ok(out)
}

/// Go text/template + Loki functionMap behaviour, case by case (see
/// `oracle_cases.rs` for the table and its provenance).
#[test]
fn matches_loki_formatter_outputs() {
    let ctx = ctx_of(oracle_cases::LABELS, oracle_cases::LINE, oracle_cases::TS);
    check_table(&ctx, oracle_cases::CASES);
}

/// Edge cases: trim markers across lines, control flow with variables,
/// printf widths on non-ASCII text, date layouts and parse errors.
#[test]
fn matches_loki_formatter_outputs_edge_cases() {
    let ctx = ctx_of(
        oracle_cases2::LABELS,
        oracle_cases2::LINE,
        oracle_cases2::TS,
    );
    check_table(&ctx, oracle_cases2::CASES);
}

fn check_table(ctx: &MapCtx, cases: &[(&str, Want)]) {
    let mut failures = Vec::new();
    for (t, want) in cases {
        let got = run(t, ctx);
        let ok = match (want, &got) {
            (Want::Out(w), Ok(g)) => w == g,
            (Want::Exec(w), Err(TemplateError::Exec(g))) => w == g,
            (Want::Parse(w), Err(TemplateError::Parse(g))) => w == g,
            _ => false,
        };
        if !ok {
            failures.push(format!("{t:?}\n   want {want:?}\n   got  {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn simple_ctx() -> MapCtx {
    MapCtx {
        labels: vec![("app", "api"), ("msg", "hello"), ("pat", "l+")],
        line: "raw line",
        ts: 0,
    }
}

/// Templates are parsed once per query and shared by the pipeline's threads.
#[test]
fn template_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Template>();
}

/// Loki's `simpleKey` shortcut and the text+field fast path give the same
/// bytes as the general executor (a missing label is "", as with
/// `missingkey=zero` over `map[string]string`).
#[test]
fn fast_path_matches_executor() {
    let ctx = simple_ctx();
    let fast = Template::parse("{{.app}}/{{ .missing }}/{{.msg}}").unwrap();
    // `{{ print .x }}` forces the general executor for the same output.
    let slow = Template::parse("{{print .app}}/{{ print .missing }}/{{print .msg}}").unwrap();
    let (mut a, mut b) = (String::new(), String::new());
    fast.render(&ctx, &mut a).unwrap();
    slow.render(&ctx, &mut b).unwrap();
    assert_eq!(a, "api//hello");
    assert_eq!(a, b);
    assert_eq!(
        Template::parse("{{.msg}}").unwrap().simple_field(),
        Some("msg")
    );
    assert_eq!(Template::parse("{{.msg}}x").unwrap().simple_field(), None);
}

/// `render` appends: callers reuse one buffer per line.
#[test]
fn render_appends_to_output() {
    let t = Template::parse("[{{.app}}]").unwrap();
    let mut out = String::from("x");
    t.render(&simple_ctx(), &mut out).unwrap();
    assert_eq!(out, "x[api]");
}

/// No actions: the text is the output, as for Loki's constant templates;
/// comments and trim markers leave only text too.
#[test]
fn constant_templates() {
    assert!(Template::parse("just text").unwrap().is_constant());
    assert!(
        Template::parse("a {{- /* note */}} b")
            .unwrap()
            .is_constant()
    );
    assert!(!Template::parse("a {{ .x }}").unwrap().is_constant());
    assert!(!Template::parse("{{ \"lit\" }}").unwrap().is_constant());
}

/// Loki's `RequiredLabelNames` walks fields in actions, branches and
/// parenthesised pipelines (every identifier of a chain).
#[test]
fn referenced_labels_in_order() {
    let t = Template::parse(
        "{{ .a }}{{ if eq .b \"x\" }}{{ .c | upper }}{{ else }}{{ (printf \"%s\" .d).e }}{{ end }}{{ .a }}{{ $.f }}",
    )
    .unwrap();
    assert_eq!(t.referenced_labels(), vec!["a", "b", "c", "d"]);
}

/// Go names the template in its messages: Loki's `label_format` templates
/// are named `label`.
#[test]
fn error_texts_carry_the_template_name() {
    let e = Template::parse_named("label", "{{ .a ").unwrap_err();
    assert_eq!(e.to_string(), "template: label:1: unclosed action");
    let t = Template::parse_named("label", "{{ .app.x }}").unwrap();
    let e = t.render(&simple_ctx(), &mut String::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "template: label:1:7: executing \"label\" at <.app.x>: can't evaluate field x in type string"
    );
}

/// A pattern taken from a label is compiled per call (Go compiles every
/// call); a literal one once at parse time. Both replace alike, and a bad
/// literal pattern still fails only when executed, as in Go.
#[test]
fn regex_patterns_literal_and_dynamic() {
    let ctx = simple_ctx();
    let mut out = String::new();
    Template::parse(
        "{{ regexReplaceAll .pat .msg \"L\" }}|{{ regexReplaceAll \"l+\" .msg \"L\" }}",
    )
    .unwrap()
    .render(&ctx, &mut out)
    .unwrap();
    assert_eq!(out, "heLo|heLo");
    let bad = Template::parse("{{ if false }}{{ count \"(\" .msg }}{{ end }}ok").unwrap();
    let mut out = String::new();
    bad.render(&ctx, &mut out).unwrap();
    assert_eq!(out, "ok");
}

/// Deviation (documented): `{{define}}`, `{{template}}` and `{{block}}` are
/// rejected at parse time; Loki accepts them but no Loki template needs them.
#[test]
fn define_and_template_are_rejected() {
    let e = Template::parse("{{ define \"x\" }}y{{ end }}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "template: line:1: unsupported action {{define}}"
    );
}

//! Tests against outputs recorded from Loki's own formatter.

use super::{Context, Template, TemplateError};

mod oracle_cases;

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

pub(super) fn shared_ctx() -> MapCtx {
    MapCtx {
        labels: oracle_cases::LABELS.to_vec(),
        line: oracle_cases::LINE,
        ts: oracle_cases::TS,
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
    let ctx = shared_ctx();
    let mut failures = Vec::new();
    for (t, want) in oracle_cases::CASES {
        let got = run(t, &ctx);
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

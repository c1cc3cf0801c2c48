//! Template bounds as the pipeline meets them: a deep template inside a
//! query gets Loki's stage error, and a spent step budget is a
//! `TemplateFormatErr` like any other render failure.

use super::{LabelFormat, LineFormat, TEMPLATE_FORMAT_ERR};
use crate::pipeline::labels::LabelsBuilder;

/// Runs `f` on a thread with a 1 MiB stack (half a tokio worker's), so a
/// test fails by overflowing it if the bound leaves too little margin.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn parens(n: usize) -> String {
    format!("{{{{{}1{}}}}}", "(".repeat(n), ")".repeat(n))
}

/// The template sits in a LogQL string, where the query's own nesting
/// guard does not look: stage validation refuses it with Loki's stage
/// error around Go's text, on a small stack.
#[test]
fn deep_template_in_a_query_gets_lokis_stage_error() {
    // Loki (and the LogQL parser) refuse queries over 128 KiB.
    let deep = parens(60_000);
    let errs = on_small_stack(move || {
        [
            format!(r#"{{app="api"}} | line_format `{deep}`"#),
            format!(r#"{{app="api"}} | label_format dst=`{deep}`"#),
        ]
        .map(|q| {
            let expr = logql_parser::parse_query(&q).unwrap();
            crate::pipeline::validate::check(&expr).unwrap_err()
        })
    });
    assert!(
        errs[0].starts_with("parse error : stage '| line_format \"{{(((")
            && errs[0].ends_with(
                "))}}\"' : invalid line template: template: line:1: max expression depth exceeded"
            ),
        "{:.100}",
        errs[0]
    );
    assert!(
        errs[1].ends_with(
            "' : invalid template for label 'dst': template: label:1: max expression depth exceeded"
        ),
        "{:.100}",
        errs[1]
    );
}

/// A spent budget is a template error like any other: `line_format` keeps
/// the line and sets Loki's `TemplateFormatErr` with the text as details;
/// `label_format` sets the same error.
#[test]
fn spent_budget_is_a_template_format_error_in_the_pipeline() {
    let t = "{{range 100000000}}{{end}}";
    let mut lf = LineFormat::new(t).unwrap();
    let mut lbs = LabelsBuilder::new();
    lbs.reset([("app", "api")]);
    let mut line = String::from("original");
    lf.process(0, &mut line, &mut lbs);
    assert_eq!(line, "original");
    assert_eq!(lbs.err(), TEMPLATE_FORMAT_ERR);
    assert_eq!(
        lbs.err_details(),
        "template: line:1:8: executing \"line\" at <100000000>: \
         exceeded maximum template steps (1000000)"
    );

    let ops = [logql_parser::LabelFormatOp::Template {
        dst: "x".into(),
        template: t.into(),
    }];
    let mut lf = LabelFormat::new(&ops).unwrap();
    let mut lbs = LabelsBuilder::new();
    lbs.reset([("app", "api")]);
    lf.process(0, "line", &mut lbs);
    assert_eq!(lbs.err(), TEMPLATE_FORMAT_ERR);
    assert_eq!(
        lbs.err_details(),
        "template: label:1:8: executing \"label\" at <100000000>: \
         exceeded maximum template steps (1000000)"
    );
}

//! Fuzzes `| json` (every label, with required labels, with expressions) and
//! `| unpack` over arbitrary lines: anyone who can write a log line controls
//! the input. Any line must give labels or Loki's JSONParserErr, never a
//! panic, a stack overflow or a hang; label names stay sanitised.
//!
//! Input: `<paths>\n<line>`, the paths comma-separated (`a.b,c[0]`), used as
//! `| json l0="a.b", l1="c[0]"` and as the grouping of a metric query.
#![no_main]

use engine::pipeline::hints::{Hints, MetricGrouping};
use engine::pipeline::json::{JsonExpressionParser, JsonParser, parse_path, unpack};
use engine::pipeline::labels::{Category, LabelsBuilder};
use libfuzzer_sys::fuzz_target;

const STREAM: [(&str, &str); 2] = [("app", "api"), ("a", "s")];

/// Parsed names are sanitised: `[A-Za-z0-9_]`, not starting with a digit.
fn check_names(lbs: &LabelsBuilder, expressions: bool) {
    lbs.for_each(|name, _, category| {
        if category != Category::Parsed || name.starts_with("__") || expressions {
            return;
        }
        assert!(
            name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'),
            "unsanitised label name {name:?}"
        );
        assert!(!name.as_bytes()[0].is_ascii_digit(), "{name:?}");
    });
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (head, line) = text.split_once('\n').unwrap_or(("", &text));
    let mut lbs = LabelsBuilder::new();

    lbs.reset(STREAM);
    JsonParser::default().process(line, &mut lbs, &Hints::default());
    check_names(&lbs, false);

    let names: Vec<String> = head
        .split(',')
        .filter(|s| !s.is_empty())
        .take(8)
        .map(str::to_owned)
        .collect();
    if !names.is_empty()
        && let Ok(hints) = Hints::for_metric(&[], &[], MetricGrouping::By(&names), None)
    {
        lbs.reset(STREAM);
        JsonParser::default().process(line, &mut lbs, &hints);
        check_names(&lbs, false);
    }

    let exprs: Vec<_> = head
        .split(',')
        .take(8)
        .enumerate()
        .filter_map(|(i, p)| parse_path(p).ok().map(|steps| (format!("l{i}"), steps)))
        .collect();
    if !exprs.is_empty() {
        let ids: Vec<String> = exprs.iter().map(|(id, _)| id.clone()).collect();
        lbs.reset(STREAM);
        JsonExpressionParser::new(exprs).process(line, &mut lbs);
        check_names(&lbs, true);
        if !line.is_empty() && lbs.err().is_empty() {
            for id in &ids {
                assert!(lbs.get(id).is_some(), "expression {id} left unset");
            }
        }
    }

    lbs.reset(STREAM);
    let mut drop = false;
    let _ = unpack(line, &mut lbs, &Hints::default(), &mut drop);
});

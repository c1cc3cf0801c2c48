//! Fuzzes `| logfmt` with its flags (`--strict`, `--keep-empty`) and field
//! expressions over arbitrary lines: any line must give labels or Loki's
//! LogfmtParserErr, never a panic or a hang.
//!
//! Input: one flag byte (bit 0 `--strict`, bit 1 `--keep-empty`, bit 2 use
//! expressions), then `<keys>\n<line>` with the keys comma-separated, used as
//! `| logfmt l0="k0", l1="k1"` when bit 2 is set.
#![no_main]

use engine::pipeline::hints::Hints;
use engine::pipeline::labels::{Category, LabelsBuilder};
use engine::pipeline::logfmt::{LOGFMT_PARSER_ERR, LogfmtParser};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let (head, line) = text.split_once('\n').unwrap_or(("", &text));
    let (strict, keep_empty) = (flags & 1 != 0, flags & 2 != 0);
    let exprs: Vec<(String, String)> = if flags & 4 != 0 {
        head.split(',')
            .take(8)
            .enumerate()
            .map(|(i, k)| (format!("l{i}"), k.to_owned()))
            .collect()
    } else {
        Vec::new()
    };
    let with_exprs = !exprs.is_empty();
    let mut lbs = LabelsBuilder::new();
    lbs.reset([("app", "api"), ("a", "s")]);
    let kept =
        LogfmtParser::new(strict, keep_empty, exprs).process(line, &mut lbs, &Hints::default());
    assert!(kept, "no hint filter, so no line is dropped");
    if !strict {
        assert!(lbs.err().is_empty(), "only --strict reports errors");
    } else if !lbs.err().is_empty() {
        assert_eq!(lbs.err(), LOGFMT_PARSER_ERR);
        assert!(lbs.err_details().starts_with("logfmt syntax error at pos "));
    }
    if !with_exprs {
        lbs.for_each(|name, value, category| {
            if category != Category::Parsed || name.starts_with("__") {
                return;
            }
            assert!(
                name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'),
                "unsanitised label name {name:?}"
            );
            assert!(keep_empty || !value.is_empty(), "{name} is empty");
        });
    }
});
